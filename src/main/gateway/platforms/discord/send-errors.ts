import { errorCode } from '../../network-cause';
import type { SendResult } from '../adapter';

/**
 * A failed Discord REST call, in the terms the delivery side needs: whether to
 * try again, whether the message surely did not arrive, and a reason in plain
 * words for Deliveries. Facts from PLATFORMS.md: `403 50007` cannot message
 * the user, `10003` unknown channel, `50013` missing permissions. 429s are
 * waited out by discord.js's REST queue per route bucket (and globally); only
 * one longer than the adapter waits inline comes here, as `rate-limited`.
 */
export type CallFailure =
  | { readonly kind: 'rate-limited'; readonly retryAfterMs: number; readonly description: string }
  | { readonly kind: 'unauthorized'; readonly description: string }
  | { readonly kind: 'permanent'; readonly reason: string; readonly description: string }
  /** Discord refused the call: the message surely did not arrive. */
  | { readonly kind: 'refused'; readonly description: string }
  /** No answer, or not one we can read: the message may have arrived. */
  | { readonly kind: 'unknown'; readonly description: string };

const PERMANENT: Record<number, string> = {
  50007: 'Discord does not let the bot message this person (they allow no direct messages from the bot, or blocked it)',
  10003: 'Discord does not know this channel (it was deleted, or the bot is not in that server)',
  50013: 'the bot lacks a permission in this channel (it needs View Channel, Send Messages, Send Messages in Threads and Read Message History)',
  50001: 'the bot cannot see this channel (give its role View Channel there)',
  10013: 'Discord does not know this person',
  50083: 'the thread is archived',
};

/*
 * Errors are recognised by their shape and name, not by class: discord.js
 * loads @discordjs/rest's CommonJS build while Homing may load its ES module
 * build, and the two builds' classes are different objects.
 */
interface RateLimitShape {
  readonly name: string;
  readonly retryAfter: number;
  readonly route: string;
  readonly global: boolean;
}
interface ApiErrorShape {
  readonly name: string;
  readonly message: string;
  readonly status: number;
  readonly code: number | string;
  readonly rawError?: { readonly message?: unknown };
}

function isRateLimit(error: unknown): error is RateLimitShape {
  return error instanceof Error && error.name.startsWith('RateLimitError') && typeof (error as { retryAfter?: unknown }).retryAfter === 'number';
}

function isApiError(error: unknown): error is ApiErrorShape {
  return error instanceof Error && error.name.startsWith('DiscordAPIError') && typeof (error as { status?: unknown }).status === 'number';
}

function isHttpError(error: unknown): error is Error & { readonly status: number } {
  return error instanceof Error && error.name === 'HTTPError' && typeof (error as { status?: unknown }).status === 'number';
}

export function classifyFailure(error: unknown, redact: (text: string) => string): CallFailure {
  if (isRateLimit(error)) {
    return { kind: 'rate-limited', retryAfterMs: Math.max(0, Math.min(error.retryAfter, 24 * 3600_000)), description: redact(`429 rate limited on ${error.route}${error.global ? ' (global)' : ''}`) };
  }
  if (isApiError(error)) {
    const code = typeof error.code === 'number' ? error.code : 0;
    const description = redact(`${error.status} ${code ? `${code} ` : ''}${String(error.rawError?.message ?? error.message).slice(0, 300)}`);
    if (error.status === 401) return { kind: 'unauthorized', description };
    const permanent = PERMANENT[code];
    if (permanent) return { kind: 'permanent', reason: permanent, description };
    if (code === 50035 || code === 50006) return { kind: 'permanent', reason: 'Discord refused the message as malformed', description };
    if (error.status === 403) return { kind: 'permanent', reason: 'Discord does not let the bot write here', description };
    if (error.status === 404) return { kind: 'permanent', reason: 'Discord does not know this channel', description };
    if (error.status >= 500) return { kind: 'unknown', description };
    return { kind: 'refused', description };
  }
  if (isHttpError(error)) {
    return error.status >= 500 ? { kind: 'unknown', description: redact(`${error.status} ${error.message}`) } : { kind: 'refused', description: redact(`${error.status} ${error.message}`) };
  }
  // A connection refused before anything was sent cannot have delivered anything.
  if (errorCode(error) === 'ECONNREFUSED') return { kind: 'refused', description: 'Discord could not be reached (connection refused)' };
  return { kind: 'unknown', description: redact(describe(error)) };
}

export function toSendResult(failure: CallFailure): SendResult {
  switch (failure.kind) {
    case 'permanent':
      return { ok: false, retryable: false, permanent: true, notDelivered: true, error: `${failure.reason} (Discord: ${failure.description})` };
    case 'rate-limited':
      return { ok: false, retryable: true, permanent: false, notDelivered: true, retryAfterMs: failure.retryAfterMs, error: `Discord asked to wait (${failure.description})` };
    case 'unauthorized':
      return { ok: false, retryable: true, permanent: false, notDelivered: true, error: `Discord refused the bot token (${failure.description})` };
    case 'refused':
      return { ok: false, retryable: true, permanent: false, notDelivered: true, error: `Discord refused the message (${failure.description})` };
    case 'unknown':
      return { ok: false, retryable: true, permanent: false, error: `no answer from Discord (${failure.description})` };
  }
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
