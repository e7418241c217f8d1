import type { SendResult } from '../adapter';

/**
 * What a `<message type="error">` bounced for one of our chunks means for the
 * ledger. A stanza error comes back only when the server (or the room) refused
 * the message, so it surely did not arrive: `notDelivered` is always set.
 *
 * - `item-not-found`, `forbidden`, `not-allowed`, `registration-required`,
 *   `jid-malformed`, `bad-request`, `policy-violation` (of type cancel/auth/modify):
 *   the address is gone or closed to us; waiting does not change it (permanent).
 * - `not-acceptable` from a room: we are not (or no longer) in it; the adapter
 *   joins again, and the chunk is retried once the room is joined (transient).
 * - `service-unavailable`, `recipient-unavailable`, `remote-server-not-found`,
 *   `remote-server-timeout`, `resource-constraint`, `internal-server-error`
 *   and anything of type `wait`: the recipient or a server is away for now (transient).
 */
export interface StanzaErrorInfo {
  /** The defined condition (`service-unavailable`), or undefined when the error names none. */
  readonly condition: string | undefined;
  /** `cancel`, `continue`, `modify`, `auth` or `wait`. */
  readonly type: string | undefined;
  /** The server's own words, if any (hostile input: shortened). */
  readonly text: string | undefined;
}

const PERMANENT = new Set(['item-not-found', 'forbidden', 'not-allowed', 'registration-required', 'jid-malformed', 'bad-request', 'policy-violation', 'gone', 'redirect', 'not-authorized', 'subscription-required', 'feature-not-implemented']);

const WORDS: Record<string, string> = {
  'service-unavailable': 'the recipient cannot take messages now (offline without offline storage, or no such account)',
  'recipient-unavailable': 'the recipient is not available',
  'item-not-found': 'no such account or room',
  forbidden: 'the server or the room does not let the agent send there (banned, or a members-only room)',
  'not-acceptable': 'the agent is not in that room (any more)',
  'not-allowed': 'sending there is not allowed',
  'registration-required': 'the room lets only its members speak',
  'jid-malformed': 'the address is not a valid JID',
  'remote-server-not-found': 'the recipient’s server cannot be found',
  'remote-server-timeout': 'the recipient’s server did not answer',
  'resource-constraint': 'the server is overloaded',
  'policy-violation': 'the server refused the message by its policy',
};

/** Plain words for an error, with the condition's name in parentheses (people search for it). */
export function describeStanzaError(error: StanzaErrorInfo): string {
  const condition = error.condition ?? 'undefined-condition';
  const words = WORDS[condition] ?? 'the server refused the message';
  const said = error.text ? `: “${error.text.slice(0, 200)}”` : '';
  return `${words} (${condition})${said}`;
}

export function stanzaErrorResult(error: StanzaErrorInfo, to: string): SendResult {
  const condition = error.condition ?? '';
  const permanent = PERMANENT.has(condition) && error.type !== 'wait';
  const description = `${to}: ${describeStanzaError(error)}`;
  if (permanent) return { ok: false, retryable: false, permanent: true, notDelivered: true, error: description };
  if (condition === 'not-acceptable') return { ok: false, retryable: true, permanent: false, notDelivered: true, error: `${description}; joining it again` };
  // The recipient may be back soon; the ledger's backoff and attempt cap bound the retries.
  return { ok: false, retryable: true, permanent: false, notDelivered: true, error: `${description}; trying again later` };
}

/** An error in words for the log and the card, with its XMPP condition when the message does not name it. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const condition = (error as { condition?: unknown }).condition;
    return typeof condition === 'string' && !error.message.includes(condition) ? `${error.message} (${condition})` : error.message;
  }
  return String(error);
}
