import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../../logger';
import { PRIVATE_DIR_MODE, readJsonOrMoveAside, writePrivateFile } from '../../private-file';

/** Event ids remembered as handled; a sync never hands back more than a few hundred. */
const HANDLED_KEPT = 4_000;
const MAX_ROOMS_KEPT = 2_000;
/** The bot's own latest events and the threads it answered in: enough for the conversations still going on. */
const OWN_KEPT = 500;

/**
 * What the Matrix adapter must remember across restarts, per account, in
 * `<dataDir>/matrix/account-<hash of homeserver and user>.json` (0600, written
 * atomically and fsynced):
 * - `deviceId`: the bot's device. A txnId is deduplicated per device, so a
 *   resend after a restart deduplicates only from the same device: a password
 *   login asks for this device again, and a token login checks it.
 * - `since`: the sync position, saved only once every event before it is saved
 *   (or refused for good); a crash earlier makes the server hand them again.
 * - `handled`: the latest event ids taken (saved or refused), so an event handed
 *   again is never taken twice; `inFlight`: the event being handed to the
 *   pipeline now: found at start-up, its redelivery is checked in the transcript.
 * - `direct`: rooms known to be direct chats (from an invite's `is_direct`);
 *   `encryptedTold`: encrypted rooms already told that Homing cannot read them.
 * - `gaps`: per room, the part of its timeline a sync skipped (`limited`) and
 *   that is not read yet: from the page token `from` forwards, up to the event
 *   `until` (the newest the syncs showed). Saved before `since` moves past it,
 *   moved on page by page as each page is taken, removed once read: a failed
 *   page is read again, never skipped.
 * - `ownEvents`, `ownThreads`: the bot's latest events and the threads it
 *   answered in, which decide whether a reply or a thread message addresses it;
 *   a restart must not forget them.
 */
const stateSchema = z.object({
  v: z.literal(1),
  userId: z.string().max(255).nullable(),
  deviceId: z.string().max(255).nullable(),
  since: z.string().max(4096).nullable(),
  handled: z.array(z.string().max(512)).max(HANDLED_KEPT),
  inFlight: z.string().max(512).nullable(),
  direct: z.array(z.string().max(512)).max(MAX_ROOMS_KEPT),
  encryptedTold: z.array(z.string().max(512)).max(MAX_ROOMS_KEPT),
  // Absent in files written before they were kept.
  gaps: z.array(z.object({ roomId: z.string().max(512), from: z.string().max(4096), until: z.string().max(512).nullable() })).max(MAX_ROOMS_KEPT).default([]),
  ownEvents: z.array(z.string().max(512)).max(OWN_KEPT).default([]),
  ownThreads: z.array(z.string().max(512)).max(OWN_KEPT).default([]),
});
type StoredState = z.output<typeof stateSchema>;

/** A room's timeline not read yet: forwards from the page token `from`, up to the event `until` (or the room's newest). */
export type TimelineGap = StoredState['gaps'][number];

export class MatrixSyncState {
  private state: StoredState;
  private readonly handledSet: Set<string>;
  /** The event that was in flight when the previous process stopped, if any. */
  readonly interrupted: string | null;

  constructor(
    private readonly file: string,
    logger: Logger,
    /** How many handled event ids are remembered (tests make it small). */
    private readonly keep = HANDLED_KEPT,
  ) {
    const loaded = existsSync(file)
      ? readJsonOrMoveAside(file, stateSchema, (movedTo) =>
          logger.error('matrix: the saved sync position could not be read; moved it aside (recent messages are not answered again)', { movedTo }),
        )
      : undefined;
    this.state = loaded ?? { v: 1, userId: null, deviceId: null, since: null, handled: [], inFlight: null, direct: [], encryptedTold: [], gaps: [], ownEvents: [], ownThreads: [] };
    this.handledSet = new Set(this.state.handled);
    this.interrupted = this.state.inFlight;
  }

  static forAccount(dataDir: string, homeserver: string, user: string, logger: Logger): MatrixSyncState {
    const dir = join(dataDir, 'matrix');
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const key = createHash('sha256').update(`${homeserver.toLowerCase()}|${user}`).digest('hex').slice(0, 16);
    return new MatrixSyncState(join(dir, `account-${key}.json`), logger);
  }

  get deviceId(): string | null {
    return this.state.deviceId;
  }

  get since(): string | null {
    return this.state.since;
  }

  /** The account and device logged in as; a different user starts from scratch (its position means nothing here). */
  setIdentity(userId: string, deviceId: string): void {
    if (this.state.userId === userId && this.state.deviceId === deviceId) return;
    const sameUser = this.state.userId === null || this.state.userId === userId;
    const base: StoredState = sameUser
      ? this.state
      : { ...this.state, since: null, handled: [], inFlight: null, direct: [], encryptedTold: [], gaps: [], ownEvents: [], ownThreads: [] };
    if (!sameUser) this.handledSet.clear();
    this.write({ ...base, userId, deviceId });
  }

  wasHandled(eventId: string): boolean {
    return this.handledSet.has(eventId);
  }

  /** Before an event's message is handed on: a crash from here leaves a trace. */
  begin(eventId: string): void {
    this.write({ ...this.state, inFlight: eventId });
  }

  /** Handed back (the gateway is stopping): the event comes again with the next sync from the same position. */
  giveBack(): void {
    if (this.state.inFlight !== null) this.write({ ...this.state, inFlight: null });
  }

  /** Saved, or refused for good: never taken again. */
  done(eventId: string): void {
    this.write({ ...this.state, handled: this.remembered([eventId]), inFlight: null });
  }

  /** The handled list with these added, the oldest forgotten beyond the bound (the set follows the list). */
  private remembered(ids: readonly string[]): string[] {
    const handled = [...this.state.handled, ...ids.filter((id) => !this.handledSet.has(id))].slice(-this.keep);
    this.handledSet.clear();
    for (const id of handled) this.handledSet.add(id);
    return handled;
  }

  /** Every event of the batch before this position is taken: the next sync starts here. */
  advance(since: string): void {
    if (this.state.since === since) return;
    this.write({ ...this.state, since });
  }

  /** The rooms' unread gaps, oldest first. */
  get gaps(): readonly TimelineGap[] {
    return this.state.gaps;
  }

  /**
   * A sync skipped part of the room's timeline after `from`, up to `until`: kept
   * before the position moves on. A room whose gap is still open only moves its
   * end: everything after its `from` is read from there, in order.
   */
  openGap(roomId: string, from: string, until: string | null): void {
    const open = this.state.gaps.find((gap) => gap.roomId === roomId);
    if (open && (until === null || open.until === until)) return;
    const gaps = open
      ? this.state.gaps.map((gap) => (gap === open ? { ...gap, until } : gap))
      : [...this.state.gaps, { roomId, from, until }].slice(-MAX_ROOMS_KEPT);
    this.write({ ...this.state, gaps });
  }

  hasGap(roomId: string): boolean {
    return this.state.gaps.some((gap) => gap.roomId === roomId);
  }

  /** The page before `from` is taken: reading goes on from there. */
  gapReadTo(roomId: string, from: string): void {
    this.write({ ...this.state, gaps: this.state.gaps.map((gap) => (gap.roomId === roomId ? { ...gap, from } : gap)) });
  }

  /** Read to its end (or the room can no longer be read). */
  closeGap(roomId: string): void {
    if (this.hasGap(roomId)) this.write({ ...this.state, gaps: this.state.gaps.filter((gap) => gap.roomId !== roomId) });
  }

  isOwnEvent(eventId: string): boolean {
    return this.state.ownEvents.includes(eventId);
  }

  rememberOwnEvent(eventId: string): void {
    if (!this.isOwnEvent(eventId)) this.write({ ...this.state, ownEvents: [...this.state.ownEvents, eventId].slice(-OWN_KEPT) });
  }

  isOwnThread(rootId: string): boolean {
    return this.state.ownThreads.includes(rootId);
  }

  rememberOwnThread(rootId: string): void {
    if (!this.isOwnThread(rootId)) this.write({ ...this.state, ownThreads: [...this.state.ownThreads, rootId].slice(-OWN_KEPT) });
  }

  /** The homeserver refused the position: the next sync starts afresh from now (the rooms' gaps stay to be read). */
  forgetPosition(): void {
    this.write({ ...this.state, since: null });
  }

  isDirect(roomId: string): boolean {
    return this.state.direct.includes(roomId);
  }

  markDirect(roomId: string): void {
    if (!this.isDirect(roomId)) this.write({ ...this.state, direct: [...this.state.direct, roomId].slice(-MAX_ROOMS_KEPT) });
  }

  wasToldEncrypted(roomId: string): boolean {
    return this.state.encryptedTold.includes(roomId);
  }

  markToldEncrypted(roomId: string): void {
    if (!this.wasToldEncrypted(roomId)) this.write({ ...this.state, encryptedTold: [...this.state.encryptedTold, roomId].slice(-MAX_ROOMS_KEPT) });
  }

  private write(next: StoredState): void {
    this.state = next;
    writePrivateFile(this.file, JSON.stringify(next) + '\n');
  }
}
