import type { MessagePipe } from '../shared/protocol';

/** The part of Electron's MessagePortMain a pipe needs (kept structural: no electron import here). */
export interface MessagePortLike {
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
  on(event: 'close', listener: () => void): void;
  postMessage(message: unknown): void;
  close(): void;
}

/** Carries the API protocol over a MessagePort (the caller starts the port). */
export function messagePortPipe(port: MessagePortLike): MessagePipe {
  return {
    send: (message) => port.postMessage(message),
    onMessage: (listener) => port.on('message', (event) => listener(event.data)),
    onClose: (listener) => port.on('close', listener),
    close: () => port.close(),
  };
}
