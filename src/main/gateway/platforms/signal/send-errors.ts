import type { SendResult } from '../adapter';
import { RpcClosedError, RpcError } from './json-rpc-connection';

/**
 * A failed `send`, in the terms the delivery side needs. signal-cli's codes
 * (SignalJsonRpcCommandHandler): -1 user error, -3 I/O error, -4 untrusted
 * identity ("Failed to send message due to untrusted identities"), -5 rate
 * limit ("Failed to send message due to rate limiting"), -6 captcha rejected;
 * -32602 invalid params, -32603 internal error. A send's `error.data.response`
 * holds its per-recipient results (SendMessageResultUtils.outputResult):
 * `{type: RATE_LIMIT_FAILURE | UNREGISTERED_FAILURE | IDENTITY_FAILURE |
 * NETWORK_FAILURE | …, retryAfterSeconds?, token?}` (JsonSendMessageResult).
 * An unregistered recipient of a direct send is a -1 "The user … is not
 * registered." (SendCommand); a group the account left, a -1 from
 * GroupNotFoundException / NotAGroupMemberException.
 */
export type SendFailure =
  | { readonly kind: 'rate-limited'; readonly retryAfterMs: number; readonly description: string }
  | { readonly kind: 'permanent'; readonly reason: string; readonly description: string }
  /** signal-cli refused the call: the message surely did not go out. */
  | { readonly kind: 'refused'; readonly description: string }
  /** No answer, or an answer we cannot read: it may have gone out. */
  | { readonly kind: 'unknown'; readonly description: string };

export const USER_ERROR = -1;
export const IO_ERROR = -3;
export const UNTRUSTED_KEY_ERROR = -4;
export const RATELIMIT_ERROR = -5;
export const CAPTCHA_REJECTED_ERROR = -6;

/** The wait when signal-cli names none (its results carry retryAfterSeconds only when the server sent one). */
const DEFAULT_RATE_LIMIT_MS = 30_000;

interface SendResultShape {
  readonly type?: unknown;
  readonly retryAfterSeconds?: unknown;
  readonly token?: unknown;
}

function resultsOf(data: unknown): SendResultShape[] {
  const response = typeof data === 'object' && data !== null ? (data as { response?: unknown }).response : undefined;
  const results = typeof response === 'object' && response !== null ? (response as { results?: unknown }).results : undefined;
  return Array.isArray(results) ? results.filter((entry): entry is SendResultShape => typeof entry === 'object' && entry !== null) : [];
}

/** Phone numbers out of signal-cli's words before they reach the log, the ledger or the window. */
export function redactNumbers(text: string): string {
  return text.replace(/\+[1-9]\d{6,14}/g, '+…').replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>');
}

export function classifySendFailure(error: unknown): SendFailure {
  if (error instanceof RpcClosedError) return { kind: 'unknown', description: redactNumbers(error.message) };
  if (!(error instanceof RpcError)) return { kind: 'unknown', description: redactNumbers(error instanceof Error ? error.message : String(error)) };
  const description = redactNumbers(`${error.code} ${error.message}`).slice(0, 300);
  const results = resultsOf(error.data);
  const types = new Set(results.map((result) => String(result.type)));
  const words = error.message.toLowerCase();
  switch (error.code) {
    case RATELIMIT_ERROR: {
      const seconds = Math.max(0, ...results.map((result) => (typeof result.retryAfterSeconds === 'number' && result.retryAfterSeconds >= 0 ? result.retryAfterSeconds : 0)));
      if (results.some((result) => typeof result.token === 'string')) {
        return {
          kind: 'permanent',
          reason: 'Signal asks this account to solve a captcha before it sends more (a rate-limit challenge): run `signal-cli -a NUMBER submitRateLimitChallenge` as its error says, then resend from Deliveries',
          description,
        };
      }
      return { kind: 'rate-limited', retryAfterMs: seconds > 0 ? Math.min(seconds, 24 * 3600) * 1000 : DEFAULT_RATE_LIMIT_MS, description };
    }
    case UNTRUSTED_KEY_ERROR:
      return {
        kind: 'permanent',
        reason: "this person's safety number changed and signal-cli does not trust the new one yet: check it, then run `signal-cli -a NUMBER trust -a PERSON` (or trust it in your Signal app) and resend from Deliveries",
        description,
      };
    case USER_ERROR:
      if (types.has('UNREGISTERED_FAILURE') || words.includes('is not registered') || words.includes('unregistered')) {
        return { kind: 'permanent', reason: 'this person is not (or no longer) on Signal', description };
      }
      if (types.has('IDENTITY_FAILURE')) return { kind: 'permanent', reason: "this person's safety number changed and is not trusted yet (signal-cli trust)", description };
      if (words.includes('not a member') || words.includes('group not found') || words.includes('not found')) {
        return { kind: 'permanent', reason: 'the account is not in this group any more (or signal-cli does not know it)', description };
      }
      if (types.has('NETWORK_FAILURE')) return { kind: 'refused', description };
      return { kind: 'permanent', reason: 'signal-cli refused the message', description };
    case CAPTCHA_REJECTED_ERROR:
      return { kind: 'permanent', reason: 'Signal rejected the captcha for this account', description };
    case -32602:
    case -32600:
      return { kind: 'permanent', reason: 'signal-cli refused the request (an outdated signal-cli? Homing needs 0.13 or newer)', description };
    case -32601:
      return { kind: 'permanent', reason: 'this signal-cli does not know the send method: update signal-cli', description };
    case IO_ERROR:
    default:
      // An I/O error or an unexpected one (-32603 "Failed to send message: …"): it may have reached Signal.
      return { kind: 'unknown', description };
  }
}

export function toSendResult(failure: SendFailure): SendResult {
  switch (failure.kind) {
    case 'rate-limited':
      return { ok: false, retryable: true, permanent: false, notDelivered: true, retryAfterMs: failure.retryAfterMs, error: `Signal is rate limiting this account; waiting (${failure.description})` };
    case 'permanent':
      return { ok: false, retryable: false, permanent: true, notDelivered: true, error: `${failure.reason} (${failure.description})` };
    case 'refused':
      return { ok: false, retryable: true, permanent: false, notDelivered: true, error: failure.description };
    case 'unknown':
      return { ok: false, retryable: true, permanent: false, error: failure.description };
  }
}
