import type { WebSocket } from 'ws';
import type { MessagePipe } from '../../shared/protocol';
import type { Logger } from '../gateway/logger';

/**
 * How much may wait in one connection's send buffer. A client that sends
 * requests but never reads the answers would otherwise grow the gateway's memory
 * without limit: above PAUSE we stop reading its requests (TCP then pushes back
 * on it), below RESUME we read again, and above DROP (events keep coming while
 * it is paused) the connection is closed: the window reconnects and reads
 * afresh.
 */
export const SEND_BUFFER_LIMITS = {
  pauseAbove: 4 << 20,
  resumeBelow: 1 << 20,
  dropAbove: 32 << 20,
} as const;

/** The protocol over a WebSocket: JSON text frames, with back-pressure. */
export function webSocketPipe(ws: WebSocket, logger: Logger, limits = SEND_BUFFER_LIMITS): MessagePipe {
  // Malformed frames (bad UTF-8, unmasked, bad opcode or close code, over maxPayload)
  // arrive here; ws closes the connection itself. Without a listener they would
  // be thrown and take the gateway down.
  ws.on('error', (error) => logger.warn('closed a WebSocket after a protocol error', { error: error.message }));

  const afterWrite = () => {
    if (!ws.isPaused || ws.bufferedAmount >= limits.resumeBelow) return;
    logger.info('reading a WebSocket client again: it caught up with its answers');
    ws.resume();
  };

  return {
    send(message) {
      if (ws.readyState !== ws.OPEN) return;
      const text = JSON.stringify(message);
      if (ws.bufferedAmount + text.length > limits.dropAbove) {
        logger.warn('closed a WebSocket whose client stopped reading', { buffered: ws.bufferedAmount });
        ws.terminate();
        return;
      }
      ws.send(text, afterWrite);
      if (!ws.isPaused && ws.bufferedAmount > limits.pauseAbove) {
        logger.info('stopped reading a WebSocket client: its answers are piling up unread', { buffered: ws.bufferedAmount });
        ws.pause();
      }
    },
    onMessage(listener) {
      ws.on('message', (data, isBinary) => {
        if (isBinary) return logger.warn('ignored a binary WebSocket frame');
        let message: unknown;
        try {
          message = JSON.parse(data.toString());
        } catch {
          return logger.warn('ignored a WebSocket frame that is not JSON');
        }
        listener(message);
      });
    },
    onClose(listener) {
      ws.on('close', listener);
    },
    close() {
      // A client that does not read would not read the close frame either.
      if (ws.bufferedAmount > limits.pauseAbove) ws.terminate();
      else ws.close();
    },
    bufferedBytes() {
      return ws.bufferedAmount;
    },
  };
}
