/**
 * The few client-server API calls Homing makes, over plain `fetch`: every
 * answer size-limited and read as untrusted JSON, every failure put in the
 * terms the adapter acts on (PLATFORMS.md's Matrix facts: `429 M_LIMIT_EXCEEDED`
 * with `retry_after_ms` and/or `Retry-After`, `403 M_FORBIDDEN`, `401
 * M_UNKNOWN_TOKEN`, `413 M_TOO_LARGE`). The access token goes only in the
 * Authorization header and never into an error text.
 */

import { readBodyLimited } from '../../http-body';
import { errorCode } from '../../network-cause';

/** A sync of many rooms is big, but not this big; beyond it the answer is refused. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

export type MatrixFailure =
  | { readonly kind: 'rate-limited'; readonly retryAfterMs: number; readonly description: string }
  | { readonly kind: 'unauthorized'; readonly description: string }
  | { readonly kind: 'forbidden'; readonly description: string }
  | { readonly kind: 'too-large'; readonly description: string }
  | { readonly kind: 'not-found'; readonly description: string }
  /** Any other refusal: the request surely did nothing. */
  | { readonly kind: 'refused'; readonly status: number; readonly errcode: string; readonly description: string }
  /** No answer, or not one we can read (5xx, a dropped connection, a timeout): the request may have been done. */
  | { readonly kind: 'unknown'; readonly description: string };

export type CallResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly failure: MatrixFailure };

export interface CallOptions {
  readonly token?: string | undefined;
  readonly body?: unknown;
  readonly query?: Record<string, string | undefined>;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** Below `/_matrix/client/` (the default), or `/_matrix/federation/` (the server's own version, which needs no token). */
  readonly api?: 'client' | 'federation';
}

export class MatrixClient {
  constructor(
    readonly homeserver: string,
    private readonly fetchImpl: typeof fetch = fetch,
    private readonly now: () => number = Date.now,
  ) {}

  /** `path` is below `/_matrix/client/` (or the `api` named), with its parts already encoded. */
  async call<T = Record<string, unknown>>(method: 'GET' | 'POST' | 'PUT', path: string, options: CallOptions): Promise<CallResult<T>> {
    const url = new URL(`${this.homeserver}/_matrix/${options.api ?? 'client'}/${path}`);
    for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(key, value);
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method,
        headers: {
          accept: 'application/json',
          ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(options.token !== undefined ? { authorization: `Bearer ${options.token}` } : {}),
        },
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
        signal,
        redirect: 'error',
      });
    } catch (error) {
      const why = timeout.aborted ? `no answer within ${Math.round(options.timeoutMs / 1000)} s` : options.signal?.aborted ? 'cancelled' : describeNetworkError(error);
      return { ok: false, failure: { kind: 'unknown', description: why } };
    }
    let text: string;
    try {
      text = await readLimited(response, MAX_RESPONSE_BYTES);
    } catch (error) {
      return { ok: false, failure: { kind: 'unknown', description: `the answer could not be read (${describe(error)})` } };
    }
    let body: unknown;
    try {
      body = text === '' ? {} : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (response.ok) {
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        return { ok: false, failure: { kind: 'unknown', description: `${response.status} with an answer that is not a JSON object` } };
      }
      return { ok: true, value: body as T };
    }
    return { ok: false, failure: classify(response.status, body, response.headers.get('retry-after'), this.now()) };
  }
}

/** A refusal in the adapter's terms; facts from PLATFORMS.md. */
export function classify(status: number, body: unknown, retryAfterHeader: string | null, now: number): MatrixFailure {
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const errcode = typeof record.errcode === 'string' ? record.errcode.slice(0, 64) : '';
  const said = typeof record.error === 'string' ? record.error.slice(0, 300) : '';
  const description = `${status}${errcode ? ` ${errcode}` : ''}${said ? `: ${said}` : ''}`.replace(/[\p{Cc}]/gu, ' ');
  if (status === 429 || errcode === 'M_LIMIT_EXCEEDED') {
    return { kind: 'rate-limited', retryAfterMs: retryAfter(record.retry_after_ms, retryAfterHeader, now), description };
  }
  if (status === 401 || errcode === 'M_UNKNOWN_TOKEN' || errcode === 'M_MISSING_TOKEN') return { kind: 'unauthorized', description };
  if (status === 413 || errcode === 'M_TOO_LARGE') return { kind: 'too-large', description };
  if (status === 403) return { kind: 'forbidden', description };
  if (status === 404) return { kind: 'not-found', description };
  if (status >= 500 || status < 400) return { kind: 'unknown', description };
  return { kind: 'refused', status, errcode, description };
}

/** The longer of `retry_after_ms` and `Retry-After` (seconds or an HTTP date); 5 s when neither is readable; at most a day. */
export function retryAfter(bodyMs: unknown, header: string | null, now: number): number {
  const candidates: number[] = [];
  if (typeof bodyMs === 'number' && Number.isFinite(bodyMs) && bodyMs >= 0) candidates.push(bodyMs);
  if (header !== null) {
    const trimmed = header.trim();
    if (/^\d{1,10}$/.test(trimmed)) candidates.push(Number(trimmed) * 1000);
    else {
      const at = Date.parse(trimmed);
      if (Number.isFinite(at)) candidates.push(Math.max(0, at - now));
    }
  }
  const wait = candidates.length > 0 ? Math.max(...candidates) : 5_000;
  return Math.min(wait, 24 * 3600 * 1000);
}

/** The body, or an error once it is larger than `limit`. */
async function readLimited(response: Response, limit: number): Promise<string> {
  const text = await readBodyLimited(response, limit);
  if (text === undefined) throw new Error(`larger than ${limit} bytes`);
  return text;
}

function describeNetworkError(error: unknown): string {
  const code = errorCode(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : undefined;
  return code ? `network error: ${code}` : `network error: ${describe(cause ?? error)}`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A path part (room id, event id, txnId, user id), encoded. */
export function part(value: string): string {
  return encodeURIComponent(value);
}
