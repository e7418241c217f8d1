/**
 * The intake contract: how each chat service hands messages over to Homing,
 * how long it keeps one for Homing while Homing is away, and so what an outage
 * can cost. One contract per platform, in its folder (`<platform>/intake.ts`),
 * declared by its module and its adapter (`intake`);
 * docs/platforms.md ("What an outage can cost") says the same in words, and
 * test/intake-contract.test.ts checks that the two agree.
 *
 * The rules every adapter follows at each edge of its contract:
 * - a position (an offset, a `since` token, a channel's last message id, a
 *   mailbox's UID, a room's last stanza-id) moves only past what was really
 *   read and saved: never past a page that was not read;
 * - a server error in the middle of a catch-up is retried, never skipped;
 * - a gap larger than one page is read page by page to its end;
 * - an outage longer than the service keeps messages is told to the user once,
 *   in words, in the window and the log (the adapter's `intake-gap` event).
 */

/** How the service hands messages over. */
export type IntakeKind =
  /** The service keeps each message until Homing confirms it (Telegram's getUpdates offset). */
  | 'confirmed-cursor'
  /** Homing keeps a position and reads what came after it (Matrix `since`, Discord channel history, IMAP UIDs, XMPP offline storage and MAM). */
  | 'positional-catch-up'
  /** Only what arrives while Homing is connected: nothing is kept for it (IRC, the window's own chat). */
  | 'push-only';

/** How long the service keeps a message for Homing while Homing is away. */
export type HistoryWindow =
  | { readonly kind: 'unbounded' }
  | { readonly kind: 'for'; readonly ms: number }
  /** As long as the server's archive keeps it (XMPP MAM: the server's retention), or not at all where it has none. */
  | { readonly kind: 'archive' }
  | { readonly kind: 'none' };

export interface IntakeContract {
  readonly kind: IntakeKind;
  /** Direct messages (or the platform's only kind of conversation). */
  readonly keeps: HistoryWindow;
  /** Group rooms, where they are kept differently from direct messages (XMPP). */
  readonly roomsKeep?: HistoryWindow;
  /** In words, for the docs and the window: what an outage can and cannot cost. */
  readonly outage: string;
}

/** The window's own chat: a platform in session keys and the ledger, with nothing kept while the gateway is down. */
export const LOCAL_INTAKE = {
  kind: 'push-only',
  keeps: { kind: 'none' },
  outage: 'The window cannot send while the gateway is down; what it sent before is saved.',
} as const satisfies IntakeContract;

/** The message the window and the log show once after an outage longer than the service keeps messages. */
export function historyLostNotice(platformLabel: string, keptFor: string): string {
  return `Homing was away longer than ${platformLabel} keeps messages (${keptFor}): messages sent to it before that may be lost.`;
}
