import type { SendResult } from '../adapter';
import { loadedGrammy } from './load-grammy';

/**
 * A failed Bot API call, in the terms the delivery side needs: whether to try
 * again, whether the message surely did not arrive, and a reason in plain words
 * for Deliveries. Facts from PLATFORMS.md: 403 blocked/kicked/deactivated and
 * 400 chat not found are permanent; 429 carries `retry_after`; a migrated group
 * carries `migrate_to_chat_id`; `can't parse entities` is a markup error.
 */
export type CallFailure =
  | { readonly kind: 'rate-limited'; readonly retryAfterMs: number; readonly description: string }
  | { readonly kind: 'migrated'; readonly to: string; readonly description: string }
  | { readonly kind: 'markup'; readonly description: string }
  | { readonly kind: 'thread-gone'; readonly description: string }
  | { readonly kind: 'unauthorized'; readonly description: string }
  /** Another program polls the same token (409 terminated by other getUpdates request). */
  | { readonly kind: 'conflict'; readonly description: string }
  /** A webhook is set on the bot, so getUpdates is refused (409 … while webhook is active, or terminated by setWebhook). */
  | { readonly kind: 'webhook'; readonly description: string }
  | { readonly kind: 'permanent'; readonly reason: string; readonly description: string }
  /** The service refused the call; the message surely did not arrive. */
  | { readonly kind: 'refused'; readonly description: string }
  /** No answer, or not one we can read: the message may have arrived. */
  | { readonly kind: 'unknown'; readonly description: string };

export function classifyFailure(error: unknown, redact: (text: string) => string): CallFailure {
  // grammY's errors come from grammY's calls: while it was never loaded, no error is one.
  const grammy = loadedGrammy();
  if (grammy && error instanceof grammy.GrammyError) {
    // The envelope is the server's: a broken one may lack any field.
    const code = typeof error.error_code === 'number' ? error.error_code : 0;
    const said = typeof error.description === 'string' ? error.description.slice(0, 500) : '(no description)';
    const description = redact(`${code} ${said}`);
    const text = said.toLowerCase();
    const parameters = typeof error.parameters === 'object' && error.parameters !== null ? error.parameters : {};
    if (code === 429) {
      const seconds = typeof parameters.retry_after === 'number' && parameters.retry_after >= 0 ? parameters.retry_after : 5;
      return { kind: 'rate-limited', retryAfterMs: Math.min(seconds, 24 * 3600) * 1000, description };
    }
    if (parameters.migrate_to_chat_id !== undefined) return { kind: 'migrated', to: String(parameters.migrate_to_chat_id), description };
    if (code === 401 || code === 404) return { kind: 'unauthorized', description };
    // telegram-bot-api (Client.cpp, process_get_updates_query and abort_long_poll) answers 409 for two
    // different things: another poller, or a webhook; only the second names it.
    if (code === 409) return text.includes('webhook') ? { kind: 'webhook', description } : { kind: 'conflict', description };
    if (code === 403) {
      if (text.includes('blocked')) return { kind: 'permanent', reason: 'the person blocked the bot', description };
      if (text.includes('kicked') || text.includes('not a member')) return { kind: 'permanent', reason: 'the bot was removed from this chat', description };
      if (text.includes('deactivated')) return { kind: 'permanent', reason: "the person's Telegram account was deleted", description };
      return { kind: 'permanent', reason: 'Telegram does not let the bot write in this chat', description };
    }
    if (code === 400) {
      if (text.includes("can't parse entities")) return { kind: 'markup', description };
      if (text.includes('message thread not found') || text.includes('topic_closed') || text.includes('topic closed')) return { kind: 'thread-gone', description };
      if (text.includes('chat not found')) return { kind: 'permanent', reason: 'Telegram does not know this chat (the bot was never in it, or it was deleted)', description };
      return { kind: 'permanent', reason: 'Telegram refused the message', description };
    }
    if (code >= 500) return { kind: 'unknown', description };
    return { kind: 'refused', description };
  }
  if (grammy && error instanceof grammy.HttpError) return { kind: 'unknown', description: redact(`network error: ${describe(error.error)}`) };
  return { kind: 'unknown', description: redact(describe(error)) };
}

export function toSendResult(failure: CallFailure): SendResult {
  switch (failure.kind) {
    case 'permanent':
      return { ok: false, retryable: false, permanent: true, notDelivered: true, error: `${failure.reason} (Telegram: ${failure.description})` };
    case 'rate-limited':
      return { ok: false, retryable: true, permanent: false, notDelivered: true, retryAfterMs: failure.retryAfterMs, error: `Telegram asked to wait (${failure.description})` };
    case 'unauthorized':
      return { ok: false, retryable: true, permanent: false, notDelivered: true, error: `Telegram refused the bot token (${failure.description})` };
    case 'markup':
    case 'thread-gone':
    case 'migrated':
    case 'conflict':
    case 'webhook':
    case 'refused':
      return { ok: false, retryable: true, permanent: false, notDelivered: true, error: `Telegram refused the message (${failure.description})` };
    case 'unknown':
      return { ok: false, retryable: true, permanent: false, error: `no answer from Telegram (${failure.description})` };
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
