import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DownloadHold } from './download-hold';

/**
 * A file server on 127.0.0.1 standing in for an XMPP server's XEP-0363 upload
 * service (prosody's mod_http_file_share): a person's client "uploads" a file
 * (`put`) and gets its GET URL, `/file_share/<random slot>/<name>`, as prosody
 * hands them out; a GET answers the bytes with Content-Type and Content-Length
 * (HEAD the headers only), an unknown or removed file 404. Tests can hold
 * downloads (`holdDownloads`: taken, unanswered until released), fail the next
 * ones with a status (`failNext`), redirect a file, and read every request
 * (`downloads`).
 */

export interface FileDownload {
  readonly path: string;
  /** 0: held, not answered (yet). */
  readonly status: number;
  /** Whether it came with credentials (an Authorization or Cookie header): it never should. */
  readonly credentials: boolean;
  readonly at: number;
}

export class HttpFileServer {
  readonly downloads: FileDownload[] = [];
  private server: Server | undefined;
  private port = 0;
  private readonly files = new Map<string, { bytes: Uint8Array; mime: string; redirect?: string }>();
  private readonly downloadHold = new DownloadHold();
  private readonly failures: number[] = [];

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => this.onRequest(req, res));
    server.on('clientError', (_error, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Stores a file as an upload slot would; returns its GET URL. */
  put(name: string, bytes: Uint8Array, mime = 'application/octet-stream'): string {
    const path = `/file_share/${randomBytes(12).toString('hex')}/${encodeURIComponent(name)}`;
    this.files.set(path, { bytes, mime });
    return `${this.origin}${path}`;
  }

  /** The file is gone (prosody expires uploads after a week by default): 404 from now on. */
  remove(url: string): void {
    this.files.delete(new URL(url).pathname);
  }

  /** A GET of `url` answers 302 to `to` (a path here, or any URL). */
  redirect(url: string, to: string): void {
    this.files.set(new URL(url).pathname, { bytes: new Uint8Array(), mime: '', redirect: to });
  }

  /** The next `times` requests answer `status` (a 503, a 500). */
  failNext(status: number, times = 1): void {
    for (let i = 0; i < times; i++) this.failures.push(status);
  }

  /** From now on requests are taken and left unanswered, until the returned function is called (they are then served). */
  holdDownloads(): () => void {
    return this.downloadHold.hold();
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    req.on('error', () => res.destroy());
    res.on('error', () => {});
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const credentials = req.headers.authorization !== undefined || req.headers.cookie !== undefined;
    const record = (status: number) => this.downloads.push({ path, status, credentials, at: Date.now() });
    const serve = () => {
      if (res.destroyed) return;
      const failure = this.failures.shift();
      if (failure !== undefined) {
        record(failure);
        return void res.writeHead(failure, { 'content-type': 'text/plain' }).end('failing as asked');
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        record(405);
        return void res.writeHead(405).end();
      }
      const file = this.files.get(path);
      if (!file) {
        record(404);
        return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      }
      if (file.redirect !== undefined) {
        record(302);
        return void res.writeHead(302, { location: file.redirect }).end();
      }
      record(200);
      res.writeHead(200, { 'content-type': file.mime, 'content-length': file.bytes.length }).end(req.method === 'HEAD' ? undefined : Buffer.from(file.bytes));
    };
    if (this.downloadHold.keep(serve)) record(0);
    else serve();
  }
}
