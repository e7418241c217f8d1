import type { AgentResult } from './agent.js';
import { formatDuration } from './timeout.js';
import { errorCode, networkCause } from '../network-cause';

/** What an error message may name: never the API key. */
export interface ErrorContext {
  /** The base URL as configured, with any user:password removed. */
  readonly url: string;
  readonly model: string;
  readonly apiKey?: string | undefined;
  readonly now: () => number;
}

const MAX_SERVER_MESSAGE = 300;

/**
 * Turns a non-2xx answer into a result the user can act on. The server's own
 * message (OpenAI-style `{ error: { message } }`, or Ollama's `{ error: "..." }`)
 * is kept because it usually says exactly what is wrong ("model 'x' not found").
 */
export function httpErrorResult(status: number, headers: Headers, body: string, ctx: ErrorContext): AgentResult {
  const detail = serverMessage(body, ctx);
  const suffix = detail ? `: ${detail}` : '';
  if (status === 401 || status === 403) {
    return { ok: false, kind: 'failed', error: `the server refused the API key (HTTP ${status})${suffix}` };
  }
  if (status === 404) {
    return {
      ok: false,
      kind: 'failed',
      error: `not found (HTTP 404): check the model "${ctx.model}" and the base URL ${ctx.url}${suffix}`,
    };
  }
  if (status === 429) {
    const retry = retryAfterMs(headers.get('retry-after'), ctx.now());
    const when = retry === undefined ? '' : `; retry after ${formatDuration(retry)}`;
    return { ok: false, kind: 'failed', error: `the server is rate-limiting requests (HTTP 429)${when}${suffix}` };
  }
  if (status >= 500) {
    return { ok: false, kind: 'failed', error: `the server failed (HTTP ${status})${suffix}` };
  }
  return { ok: false, kind: 'failed', error: `the server rejected the request (HTTP ${status})${suffix}` };
}

/** The `message` of a JSON error body, or a short excerpt of a non-JSON one. */
export function serverMessage(body: string, ctx: Pick<ErrorContext, 'apiKey'>): string {
  let message = body.trim();
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown; detail?: unknown };
    const error = parsed.error;
    if (typeof error === 'string') message = error;
    else if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
      message = (error as { message: string }).message;
    } else if (typeof parsed.message === 'string') message = parsed.message;
    else if (typeof parsed.detail === 'string') message = parsed.detail;
  } catch {
    // Not JSON (an HTML error page from a proxy): keep a short excerpt.
  }
  // Redacted before it is cut: a key straddling the cut would otherwise survive in part.
  return redact(message, ctx.apiKey).replace(/\s+/g, ' ').slice(0, MAX_SERVER_MESSAGE);
}

/** Some servers echo the key back ("Incorrect API key provided: sk-..."). */
export function redact(text: string, apiKey: string | undefined): string {
  return apiKey && apiKey.length >= 4 ? text.split(apiKey).join('[redacted]') : text;
}

/** Retry-After is either delta-seconds or an HTTP date. */
export function retryAfterMs(header: string | null, now: number): number | undefined {
  if (!header) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1_000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A `fetch` that rejected before or during the response (not an abort). */
export function networkErrorResult(error: unknown, ctx: ErrorContext, phase: 'connect' | 'stream'): AgentResult {
  const code = errorCode(error);
  if (phase === 'stream') {
    return { ok: false, kind: 'failed', error: `the connection to ${ctx.url} broke mid-reply${code ? ` (${code})` : ''}` };
  }
  const why = networkCause(error) ?? 'no answer';
  return { ok: false, kind: 'unreachable', error: `could not reach ${ctx.url} (${why})` };
}

