import type { SendResult, SendTarget } from '../delivery/sender';
import type { PlatformRoom } from '../../../shared/api';
import type { SessionSource } from '../session/source';
import type { IntakeContract } from './intake';
import type { MediaOffer, MediaOpener } from '../media/media';

/**
 * What every chat platform implements. The gateway knows platforms only through
 * this interface: connection state as events, inbound messages, and `send`, whose
 * result says whether a failure is worth retrying.
 *
 * What adapters share is not inherited but held, as parts from skeleton/: the
 * state and its events, the intake hand-on, admission, the receive loop or the
 * reconnect wait, "typing…". An adapter keeps only what is its platform's: the
 * transport, inbound parsing, the send call and its errors.
 */

export type AdapterState = 'connecting' | 'connected' | 'degraded' | 'disconnected' | 'auth-failed';

export interface InboundMessage {
  readonly source: SessionSource;
  readonly text: string;
  /**
   * The platform's id for this message, stable if the platform delivers it again;
   * it is part of the obligation id, so a redelivered message never makes a
   * second obligation.
   */
  readonly messageRef: string;
  /** What a reply should point at (the message, a thread root), where the platform has replies. */
  readonly replyTo?: string | undefined;
  /**
   * The platform hands this message again and the adapter cannot tell whether
   * the previous process saved it (it died in between): the pipeline looks for
   * its messageRef in the conversation before saving it a second time.
   */
  readonly maybeSeen?: boolean | undefined;
  /**
   * Photos, voice notes and files the message carries, as references: saved
   * with the message, fetched (`openMedia`) before its turn starts.
   */
  readonly media?: readonly MediaOffer[] | undefined;
}

/**
 * What became of an inbound message at intake, for adapters that confirm
 * receipt to their platform (Telegram's offset) only once it is durable:
 * `saved` (on disk, or already there), `refused` (it will never be taken: an
 * unusable source; confirm it anyway), `not-now` (not saved: the gateway is
 * stopping or the disk failed; have the platform hand it again).
 */
export type IntakeOutcome = 'saved' | 'refused' | 'not-now';

/** Where a "typing…" indicator goes. */
export type TypingTarget = Pick<SendTarget, 'chatId' | 'threadId'>;

/** One chunk's destination and its idempotency key; one shape for adapters and the delivery loop. */
export type { SendResult, SendTarget } from '../delivery/sender';

/** The unit a platform counts its message limit in. */
export type LengthUnit = 'code-points' | 'utf16' | 'bytes';

export interface MessageLimits {
  readonly maxLength: number;
  readonly unit: LengthUnit;
}

export type AdapterEvent =
  | {
      readonly type: 'state';
      readonly state: AdapterState;
      readonly error?: string | undefined;
      /** Wall-clock ms of the adapter's next reconnect try, when one is scheduled (its backoff). */
      readonly nextAttemptAt?: number | undefined;
    }
  /** `ack`, when present, is called once with what became of the message at intake. */
  | { readonly type: 'message'; readonly message: InboundMessage; readonly ack?: ((outcome: IntakeOutcome) => void) | undefined }
  /** More destinations can take sends now (IRC joined a channel): what waited for them may go. */
  | { readonly type: 'reachable' }
  /** The rooms listRooms() gives changed (joined, named, found encrypted): the window shows them again. */
  | { readonly type: 'rooms' }
  /**
   * Messages may be lost for good (an outage longer than the service keeps them,
   * a room without an archive): `text` says so in words. The adapter emits it
   * once per loss; the window and the log show it.
   */
  | { readonly type: 'intake-gap'; readonly text: string };

export interface PlatformAdapter {
  /** The platform's name in session keys and the ledger (`irc`, `local`, …). */
  readonly platform: string;
  readonly limits: MessageLimits;
  /** How the platform hands messages over and how long it keeps them (intake.ts). */
  readonly intake: IntakeContract;
  /** True when the platform deduplicates a resend by its idempotency key (Matrix txnId, Discord nonce). */
  readonly idempotentSends: boolean;
  /**
   * With `idempotentSends`: how long after a send the server still recognises
   * its key (Discord keeps a nonce "a few minutes", Synapse a txnId a day).
   * Absent: for good. A resend later than this may appear twice, so it carries the marker.
   */
  readonly dedupWindowMs?: number;
  state(): AdapterState;
  /** Starts connecting (and reconnecting with backoff); progress arrives as state events. */
  connect(): Promise<void>;
  /** Disconnects and stops reconnecting. */
  disconnect(): Promise<void>;
  /**
   * Whether a send to this destination can go out now. The delivery side asks
   * this instead of reading state names: a `degraded` IRC connection (one channel
   * refused) still sends to the channels it joined and to direct messages.
   * Absent means "while connected or degraded".
   */
  canSend?(target: Pick<SendTarget, 'chatId' | 'threadId'>): boolean;
  send(text: string, target: SendTarget): Promise<SendResult>;
  /** Opens a file one of its messages offered (media/media.ts); absent where a platform offers none. */
  openMedia?: MediaOpener;
  /**
   * Optional: shows that the agent is working on a reply ("typing…") until the
   * returned function is called. The pipeline calls it around an agent turn.
   */
  typing?(target: TypingTarget): () => void;
  /**
   * Optional: a short best-effort message outside the ledger (a pairing code,
   * an approval's greeting). Never throws; a failure is only logged. True once
   * it went out, so a pairing code is marked told only when it was sent.
   */
  sendNotice?(chatId: string, text: string): Promise<boolean>;
  onEvent(listener: (event: AdapterEvent) => void): () => void;
  /** Optional: the rooms the platform is in, with names (Matrix), for the window. */
  listRooms?(): readonly PlatformRoom[];
  /**
   * After a resume from sleep: checks that the connection still works (a socket can
   * look open long after the server dropped it) and reconnects if it does not.
   */
  probe(): Promise<void>;
}
