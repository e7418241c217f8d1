import { errorCode } from '../../network-cause';
import type { SendResult } from '../adapter';

/**
 * A failed Web API call (an error thrown by @slack/web-api), in the terms the
 * delivery side needs: whether to try again, whether the message surely did
 * not arrive, and a reason in plain words for Deliveries. Slack answers most
 * failures with HTTP 200 `{ok:false, error}` (docs.slack.dev, "Web API basics":
 * "Slack's Web API doesn't use meaningful status codes besides 429 and 200",
 * as @slack/web-api's makeRequest says too); the error names below are from
 * each method's reference page (chat.postMessage, conversations.history).
 */
export type CallFailure =
  | { readonly kind: 'rate-limited'; readonly retryAfterMs: number; readonly description: string }
  /** `permanent`: the account is gone (account_inactive): the reply fails for good, in words, instead of waiting for a new token. */
  | { readonly kind: 'unauthorized'; readonly reason: string; readonly description: string; readonly permanent: boolean }
  | { readonly kind: 'permanent'; readonly reason: string; readonly description: string }
  /** Slack refused the call: the message surely did not arrive. */
  | { readonly kind: 'refused'; readonly description: string }
  /** No answer, or not one we can read: the message may have arrived. */
  | { readonly kind: 'unknown'; readonly description: string };

const PERMANENT: Record<string, string> = {
  channel_not_found: 'Slack does not know this channel, or the bot cannot see it (it was deleted, or it is private and the bot is not in it)',
  not_in_channel: 'the bot is not in this channel: invite it with /invite @your-app',
  is_archived: 'the channel is archived',
  msg_too_long: 'the message is too long for Slack',
  no_text: 'the message was empty',
  restricted_action: 'a workspace setting does not let the bot post here',
  restricted_action_read_only_channel: 'the channel is read-only for the bot',
  restricted_action_thread_only_channel: 'the channel takes messages only in threads',
  restricted_action_non_threadable_channel: 'the channel does not take replies in threads',
  cannot_reply_to_message: 'Slack does not take a reply to this message',
  thread_locked: 'the thread is locked',
  user_not_found: 'Slack does not know this person',
  cannot_dm_bot: 'Slack does not let the bot message another bot',
  missing_scope: 'the app lacks a scope it needs (docs/platforms.md lists them: add them under OAuth & Permissions and reinstall the app)',
};

/**
 * Token failures: they stop every call until a new token is saved. Of these,
 * account_inactive (the bot's account deactivated, the app uninstalled) is a
 * permanent failure of the reply as well (issue 39 names it among them): the
 * owner retries it from Deliveries once the app is installed again.
 */
const GONE_ACCOUNT = new Set(['account_inactive']);

/** Token failures: they stop every call until a new token is saved. */
const UNAUTHORIZED: Record<string, string> = {
  invalid_auth: 'Slack refused the token (invalid_auth): paste it again in Platforms → Slack',
  not_authed: 'no token was sent to Slack',
  account_inactive: 'the bot’s Slack account is deactivated or the app was uninstalled (account_inactive): reinstall the app and paste its new bot token',
  token_revoked: 'the token was revoked (the app was uninstalled?): reinstall the app and paste its new token',
  token_expired: 'the token expired: paste a new one',
  no_permission: 'the token has no permission for this',
  team_disabled: 'the Slack workspace is disabled',
  not_allowed_token_type: 'a token of the wrong kind was given (the app-level token xapp-… and the bot token xoxb-… are easily swapped)',
};

/** Slack's own trouble: the call may or may not have happened. */
const UNKNOWN = new Set(['fatal_error', 'internal_error', 'service_unavailable', 'request_timeout']);

interface CodedShape {
  readonly code?: unknown;
  readonly data?: { readonly error?: unknown };
  readonly retryAfter?: unknown;
  readonly statusCode?: unknown;
  readonly original?: unknown;
  readonly message?: unknown;
}

export function classifyFailure(error: unknown, redact: (text: string) => string): CallFailure {
  const coded = (typeof error === 'object' && error !== null ? error : {}) as CodedShape;
  switch (coded.code) {
    case 'slack_webapi_rate_limited_error': {
      const seconds = typeof coded.retryAfter === 'number' && Number.isFinite(coded.retryAfter) ? coded.retryAfter : 1;
      return { kind: 'rate-limited', retryAfterMs: Math.max(0, Math.min(seconds * 1000, 24 * 3600_000)), description: `429 rate limited: retry after ${seconds} s` };
    }
    case 'slack_webapi_platform_error': {
      const name = typeof coded.data?.error === 'string' ? coded.data.error.slice(0, 100) : 'unknown_error';
      const description = redact(name);
      if (UNAUTHORIZED[name]) return { kind: 'unauthorized', reason: UNAUTHORIZED[name]!, description, permanent: GONE_ACCOUNT.has(name) };
      if (PERMANENT[name]) return { kind: 'permanent', reason: PERMANENT[name]!, description };
      if (name === 'ratelimited') return { kind: 'rate-limited', retryAfterMs: 1_000, description };
      if (UNKNOWN.has(name)) return { kind: 'unknown', description };
      if (name.startsWith('invalid_') || name === 'too_many_attachments') return { kind: 'permanent', reason: 'Slack refused the message as malformed', description };
      return { kind: 'refused', description };
    }
    case 'slack_webapi_http_error': {
      const status = typeof coded.statusCode === 'number' ? coded.statusCode : 0;
      const description = `HTTP ${status}`;
      return status >= 500 || status === 0 ? { kind: 'unknown', description } : { kind: 'refused', description };
    }
    case 'slack_webapi_request_error': {
      // A connection refused before anything was sent cannot have delivered anything.
      const code = errorCode(coded.original);
      if (code === 'ECONNREFUSED') return { kind: 'refused', description: 'Slack could not be reached (connection refused)' };
      return { kind: 'unknown', description: redact(`no answer from Slack (${code ?? describe(coded.original ?? error)})`) };
    }
    default:
      return { kind: 'unknown', description: redact(describe(error)) };
  }
}

export function toSendResult(failure: CallFailure): SendResult {
  switch (failure.kind) {
    case 'permanent':
      return { ok: false, retryable: false, permanent: true, notDelivered: true, error: `${failure.reason} (Slack: ${failure.description})` };
    case 'rate-limited':
      return { ok: false, retryable: true, permanent: false, notDelivered: true, retryAfterMs: failure.retryAfterMs, error: `Slack asked to wait (${failure.description})` };
    case 'unauthorized':
      // A new token delivers it: the reply waits rather than fails — unless the account itself is gone.
      return { ok: false, retryable: !failure.permanent, permanent: failure.permanent, notDelivered: true, error: `${failure.reason} (Slack: ${failure.description})` };
    case 'refused':
      return { ok: false, retryable: true, permanent: false, notDelivered: true, error: `Slack refused the message (${failure.description})` };
    case 'unknown':
      return { ok: false, retryable: true, permanent: false, error: `no answer from Slack (${failure.description})` };
  }
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
