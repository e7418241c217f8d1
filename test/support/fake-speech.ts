import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local OpenAI-compatible speech-to-text server: `POST /v1/audio/transcriptions`
 * with a multipart/form-data body, parsed here from the raw bytes (not with
 * undici, which also builds the client's body: one library on both ends would
 * hide its own mistakes).
 *
 * Modelled on the OpenAI API reference, "Create transcription" (POST
 * /audio/transcriptions; fields `file` — the audio with a file name whose
 * extension gives the format —, `model`, optional `language` (ISO-639-1),
 * `prompt`, `response_format` (json, the default, text, srt, verbose_json, vtt),
 * `temperature`; `json` answers `{ "text": "…" }`) and on its error envelope
 * `{ "error": { "message", "type", "param", "code" } }` (`invalid_request_error`,
 * status 400 for a bad request, 401 for a missing or wrong key, 413 over the
 * 25 MB upload limit).
 *
 * `dialect: 'whisper.cpp'` answers like whisper.cpp's server
 * (examples/server/server.cpp; README: the route is `/inference` unless started
 * with `--inference-path /v1/audio/transcriptions`): a request it cannot serve
 * gets status **200** with `{ "error": "no 'file' field in the request" }`.
 */

export interface TranscriptionRequest {
  readonly model: string | undefined;
  readonly language: string | undefined;
  readonly responseFormat: string | undefined;
  readonly filename: string | undefined;
  readonly contentType: string | undefined;
  readonly bytes: Buffer;
  readonly authorization: string | undefined;
}

export interface FakeSpeechOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (else 401, as OpenAI). */
  readonly apiKey?: string;
  readonly dialect?: 'openai' | 'whisper.cpp';
  /** What any audio not matched by transcriptFor transcribes to. */
  readonly defaultTranscript?: string;
}

type Matcher = (request: TranscriptionRequest) => boolean;

/** OpenAI's upload limit. */
const MAX_BODY = 25 * 1024 * 1024;
export const TRANSCRIPTIONS_PATH = '/v1/audio/transcriptions';

export class FakeSpeech {
  /** Every request that reached the route with a parsable body, in order (failed ones too). */
  readonly requests: TranscriptionRequest[] = [];
  defaultTranscript: string;
  private readonly rules: { match: Matcher; text: string }[] = [];
  private failures: { left: number; status: number; message: string } | undefined;
  private delayMs = 0;
  private readonly server: Server;
  private port = 0;

  private constructor(private readonly options: FakeSpeechOptions) {
    this.defaultTranscript = options.defaultTranscript ?? 'hello from the fake speech server';
    this.server = createServer((req, res) => this.handle(req, res));
  }

  static async start(options: FakeSpeechOptions = {}): Promise<FakeSpeech> {
    const fake = new FakeSpeech(options);
    await new Promise<void>((resolve, reject) => {
      fake.server.once('error', reject);
      fake.server.listen(0, '127.0.0.1', resolve);
    });
    fake.port = (fake.server.address() as AddressInfo).port;
    return fake;
  }

  /** The transcription endpoint's full URL. */
  get url(): string {
    return `http://127.0.0.1:${this.port}${TRANSCRIPTIONS_PATH}`;
  }

  /** Audio with exactly these bytes (or matching the predicate) transcribes to `text`; later rules win. */
  transcriptFor(match: Uint8Array | Matcher, text: string): void {
    const rule: Matcher = typeof match === 'function' ? match : (request) => Buffer.from(match).equals(request.bytes);
    this.rules.unshift({ match: rule, text });
  }

  /** The next `count` requests fail with `status` (an OpenAI error envelope carrying `message`). */
  failNext(count: number, status: number, message = 'The server had an error while processing your request.'): void {
    this.failures = { left: count, status, message };
  }

  /** Every answer waits this long first (for timeouts and cancels). */
  delayAnswers(ms: number): void {
    this.delayMs = ms;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('error', () => undefined);
    req.on('end', () => {
      void this.answer(req, res, size > MAX_BODY ? undefined : Buffer.concat(chunks)).catch(() => res.destroy());
    });
  }

  private async answer(req: IncomingMessage, res: ServerResponse, body: Buffer | undefined): Promise<void> {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'POST' || path !== TRANSCRIPTIONS_PATH) {
      return this.error(res, 404, `Invalid URL (${req.method} ${path})`, 'invalid_request_error');
    }
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    if (res.destroyed) return;
    if (body === undefined) return this.error(res, 413, 'Maximum content size limit (26214400) exceeded.', 'invalid_request_error');
    const authorization = req.headers.authorization;
    const boundary = /^multipart\/form-data;\s*boundary="?([^";]+)"?/i.exec(req.headers['content-type'] ?? '')?.[1];
    const parts = boundary ? parseMultipart(body, boundary) : undefined;
    if (!parts) return this.error(res, 400, 'Could not parse multipart form', 'invalid_request_error');
    const field = (name: string): string | undefined => {
      const part = parts.find((p) => p.name === name && p.filename === undefined);
      return part?.data.toString('utf8');
    };
    const file = parts.find((p) => p.name === 'file' && p.filename !== undefined);
    const request: TranscriptionRequest = {
      model: field('model'),
      language: field('language'),
      responseFormat: field('response_format'),
      filename: file?.filename,
      contentType: file?.contentType,
      bytes: file?.data ?? Buffer.alloc(0),
      authorization,
    };
    this.requests.push(request);

    if (this.options.apiKey !== undefined && authorization !== `Bearer ${this.options.apiKey}`) {
      return this.error(res, 401, authorization ? 'Incorrect API key provided.' : 'You didn’t provide an API key.', 'invalid_request_error', 'invalid_api_key');
    }
    if (this.failures && this.failures.left > 0) {
      this.failures.left -= 1;
      return this.error(res, this.failures.status, this.failures.message, this.failures.status >= 500 ? 'server_error' : 'invalid_request_error');
    }
    if (!file) {
      if (this.options.dialect === 'whisper.cpp') return this.json(res, 200, { error: "no 'file' field in the request" });
      return this.error(res, 400, "Missing required parameter: 'file'.", 'invalid_request_error', undefined, 'file');
    }
    if (!request.model && this.options.dialect !== 'whisper.cpp') {
      return this.error(res, 400, "Missing required parameter: 'model'.", 'invalid_request_error', undefined, 'model');
    }
    const text = this.rules.find((rule) => rule.match(request))?.text ?? this.defaultTranscript;
    switch (request.responseFormat ?? 'json') {
      case 'json':
        return this.json(res, 200, { text });
      case 'verbose_json':
        return this.json(res, 200, { task: 'transcribe', language: request.language ?? 'english', duration: 0, text, segments: [] });
      case 'text':
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(`${text}\n`);
        return;
      default:
        return this.error(res, 400, `Unsupported response_format in this fake: ${request.responseFormat}`, 'invalid_request_error', undefined, 'response_format');
    }
  }

  private error(res: ServerResponse, status: number, message: string, type: string, code?: string, param?: string): void {
    if (this.options.dialect === 'whisper.cpp') return this.json(res, status, { error: message });
    this.json(res, status, { error: { message, type, param: param ?? null, code: code ?? null } });
  }

  private json(res: ServerResponse, status: number, value: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  }
}

export interface MultipartPart {
  readonly name: string;
  readonly filename: string | undefined;
  readonly contentType: string | undefined;
  readonly data: Buffer;
}

/**
 * Splits a multipart/form-data body (RFC 7578): parts between `--boundary`
 * lines, each with CRLF-separated headers, a blank line, then its bytes up to
 * the CRLF before the next delimiter; `--boundary--` ends it. Undefined when
 * the body does not follow that shape (a missing closing delimiter, a part
 * without Content-Disposition: form-data; name=…).
 */
export function parseMultipart(body: Buffer, boundary: string): MultipartPart[] | undefined {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: MultipartPart[] = [];
  // Anything before the first delimiter is a preamble, ignored.
  let at = body.indexOf(delimiter);
  if (at === -1) return undefined;
  for (;;) {
    at += delimiter.length;
    if (body.subarray(at, at + 2).toString('latin1') === '--') return parts;
    if (body.subarray(at, at + 2).toString('latin1') !== '\r\n') return undefined;
    const headersEnd = body.indexOf('\r\n\r\n', at + 2);
    if (headersEnd === -1) return undefined;
    const headers = body.subarray(at + 2, headersEnd).toString('utf8').split('\r\n');
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headersEnd + 4);
    if (next === -1) return undefined;
    const disposition = headers.find((h) => /^content-disposition:/i.test(h));
    const name = disposition && /;\s*name="([^"]*)"/i.exec(disposition)?.[1];
    if (!disposition || !/^content-disposition:\s*form-data/i.test(disposition) || name === undefined) return undefined;
    const filename = /;\s*filename="([^"]*)"/i.exec(disposition)?.[1];
    const contentType = headers.find((h) => /^content-type:/i.test(h))?.replace(/^content-type:\s*/i, '');
    parts.push({ name, filename, contentType, data: body.subarray(headersEnd + 4, next) });
    at = next + 2;
  }
}
