/**
 * The intake contract: how each chat service hands messages over to Homing,
 * how long it keeps one for Homing while Homing is away, and so what an outage
 * can cost. One contract per platform, declared by its adapter (`intake`);
 * docs/platforms.md ("What an outage can cost") says the same in words, and
 * intake.test.ts checks that the two agree.
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

const DAY_MS = 24 * 60 * 60 * 1000;

/** Every platform's contract, by the platform's name in session keys and the ledger. */
export const INTAKE = {
  local: {
    kind: 'push-only',
    keeps: { kind: 'none' },
    outage: 'The window cannot send while the gateway is down; what it sent before is saved.',
  },
  telegram: {
    kind: 'confirmed-cursor',
    // telegram-bot-api keeps an update until it is confirmed or 24 hours have passed since it arrived.
    keeps: { kind: 'for', ms: DAY_MS },
    outage:
      'Telegram keeps a message for Homing for 24 hours. An outage shorter than that costs nothing; after a longer one, what was sent more than 24 hours before Homing came back is gone, and Homing says so once.',
  },
  matrix: {
    kind: 'positional-catch-up',
    keeps: { kind: 'unbounded' },
    outage: 'The homeserver keeps the rooms\u2019 history: after any outage Homing reads everything it missed, page by page.',
  },
  discord: {
    kind: 'positional-catch-up',
    keeps: { kind: 'unbounded' },
    outage: 'Discord keeps every channel\u2019s history: after any outage Homing reads everything it missed in the channels it answers in, page by page.',
  },
  xmpp: {
    kind: 'positional-catch-up',
    keeps: { kind: 'unbounded' },
    roomsKeep: { kind: 'archive' },
    outage:
      'The server stores direct messages offline until Homing logs in. Room messages sent while Homing was away are read from the room\u2019s archive (XEP-0313) where the room keeps one, as far back as the archive goes; a room without an archive keeps nothing for Homing.',
  },
  email: {
    kind: 'positional-catch-up',
    keeps: { kind: 'unbounded' },
    outage: 'The mailbox keeps the mail: after any outage Homing reads every message that arrived since the last one it saved.',
  },
  irc: {
    kind: 'push-only',
    keeps: { kind: 'none' },
    outage: 'IRC keeps nothing for Homing: a line sent while Homing is not connected is never seen.',
  },
} as const satisfies Record<string, IntakeContract>;

export type IntakePlatform = keyof typeof INTAKE;

/** The message the window and the log show once after an outage longer than the service keeps messages. */
export function historyLostNotice(platformLabel: string, keptFor: string): string {
  return `Homing was away longer than ${platformLabel} keeps messages (${keptFor}): messages sent to it before that may be lost.`;
}
