/**
 * An incremental Server-Sent Events parser (the WHATWG event-stream format):
 * lines end in CRLF, LF or CR; `data:` lines accumulate into one event until a
 * blank line; lines starting with `:` are comments (keep-alives); other fields
 * are ignored. Network chunks may split a line, an event, or a CRLF anywhere,
 * so nothing is dispatched before its terminating blank line.
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  /** True when the previous chunk ended in CR, so a leading LF is its pair. */
  private pendingCr = false;

  constructor(private readonly onEvent: (data: string) => void) {}

  push(chunk: string): void {
    if (this.pendingCr && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.pendingCr = chunk.endsWith('\r');
    this.buffer += chunk;
    const lines = this.buffer.split(/\r\n|\r|\n/);
    this.buffer = lines.pop() ?? '';
    for (const line of lines) this.line(line);
  }

  /** The stream ended: an unterminated event is dropped, as the format requires. */
  end(): void {
    this.buffer = '';
    this.data = [];
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) this.onEvent(this.data.join('\n'));
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
  }
}
