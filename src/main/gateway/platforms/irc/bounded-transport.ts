/**
 * The most bytes a server may send without ending its line. irc-framework's
 * transport keeps everything up to the next line feed in memory; a server that
 * never sends one would grow it without limit. Past this, the connection is
 * dropped (the adapter reconnects with its backoff): no honest server sends a
 * 256 KiB line, and the line guard drops anything over 16 384 characters anyway.
 */
export const MAX_PENDING_BYTES = 256 * 1024;

interface NetTransportInternals {
  incoming_buffer: Buffer;
  socket?: { destroy(error?: Error): void } | null;
  onSocketData(data: Buffer): void;
}

/**
 * irc-framework's own TCP/TLS transport (`NetTransport`, its
 * src/transports/net.js), with a cap on the unfinished line it buffers.
 */
export function boundedTransport(NetTransport: unknown): unknown {
  return class BoundedTransport extends (NetTransport as new (options: unknown) => NetTransportInternals) {
    override onSocketData(data: Buffer): void {
      super.onSocketData(data);
      if (this.incoming_buffer.length > MAX_PENDING_BYTES) {
        this.incoming_buffer = Buffer.alloc(0);
        this.socket?.destroy(new Error(`the server sent more than ${MAX_PENDING_BYTES} bytes without ending a line`));
      }
    }
  };
}
