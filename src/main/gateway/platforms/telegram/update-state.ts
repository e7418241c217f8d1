import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../../logger';
import { PRIVATE_DIR_MODE, readJsonOrMoveAside, writePrivateFile } from '../../private-file';

/**
 * What the Telegram adapter must remember across restarts, per bot, in
 * `<dataDir>/telegram/bot-<id>.json` (0600, written atomically and fsynced):
 * - `handled`: the highest update_id whose message is saved (or was refused for
 *   good). Telegram keeps an update until a later getUpdates confirms it, so
 *   after a crash it hands some again; those at or below `handled` are skipped.
 * - `inFlight`: the update being handed to the pipeline right now. Found at
 *   start-up, it means the process died between "handing" and "saved": that
 *   update may already be in a transcript, so its redelivery is checked there.
 * - `migrations`: group id → the supergroup it became, so the conversation
 *   (keyed by the first id) keeps its history and replies go to the new chat.
 * - `lastPolledAt`: when Telegram last answered a getUpdates (wall-clock ms).
 *   Telegram keeps an update only 24 hours, so an absence longer than that
 *   from this moment may have cost messages; it is renewed once the loss is
 *   told, so a restart does not tell it again. Absent in files written before
 *   it existed (and before the first poll): no absence is known then.
 * - `apiRoot`: the Bot API server the position belongs to. Each server numbers
 *   updates its own way, so another server (a local telegram-bot-api, or back
 *   to Telegram's) starts from its queue's head.
 * - `recheck`: the ids changed (another server, or Telegram numbered anew):
 *   until the server's queue is read to its end, each message is looked for in
 *   its conversation before it is saved, since it may be one Homing already
 *   took under its old number.
 */
const stateSchema = z.object({
  v: z.literal(1),
  handled: z.number().int().safe(),
  inFlight: z.number().int().safe().nullable(),
  migrations: z.record(z.string().regex(/^-?\d{1,20}$/), z.string().regex(/^-?\d{1,20}$/)),
  lastPolledAt: z.number().int().safe().optional(),
  apiRoot: z.string().optional(),
  recheck: z.boolean().optional(),
});
type StoredState = z.output<typeof stateSchema>;

/** How stale the saved `lastPolledAt` may be. */
const POLLED_AT_PRECISION_MS = 60_000;

export class TelegramUpdateState {
  private state: StoredState;
  /** The update that was in flight when the previous process stopped, if any. */
  readonly interrupted: number | null;

  constructor(
    private readonly file: string,
    logger: Logger,
  ) {
    const loaded = existsSync(file)
      ? readJsonOrMoveAside(file, stateSchema, (movedTo) =>
          logger.error('telegram: the saved update position could not be read; moved it aside (some messages may be answered twice)', { movedTo }),
        )
      : undefined;
    this.state = loaded ?? { v: 1, handled: 0, inFlight: null, migrations: {} };
    this.interrupted = this.state.inFlight;
  }

  static forBot(dataDir: string, botId: number, logger: Logger): TelegramUpdateState {
    const dir = join(dataDir, 'telegram');
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    return new TelegramUpdateState(join(dir, `bot-${botId}.json`), logger);
  }

  get handled(): number {
    return this.state.handled;
  }

  wasHandled(updateId: number): boolean {
    return updateId <= this.state.handled;
  }

  /** Before an update's message is handed on: a crash from here leaves a trace. */
  begin(updateId: number): void {
    this.write({ ...this.state, inFlight: updateId });
  }

  /** The update's message is saved (or refused for good): it is never handled again. */
  done(updateId: number): void {
    if (updateId <= this.state.handled && this.state.inFlight === null) return;
    this.write({ ...this.state, handled: Math.max(this.state.handled, updateId), inFlight: null });
  }

  /**
   * Telegram numbered its updates anew (after a week without updates it picks
   * the next id at random, and another Bot API server has ids of its own): the
   * position restarts just below the first update of the new numbering, so
   * updates are confirmed and skipped by the new numbers from now on.
   */
  renumber(firstUpdateId: number): void {
    this.write({ ...this.state, handled: Math.max(0, firstUpdateId - 1), recheck: true });
  }

  /**
   * The position is for updates from `apiRoot`; true when it was another
   * server's, which is then forgotten. A file from before servers were noted
   * is taken to be this server's.
   */
  useServer(apiRoot: string): boolean {
    const known = this.state.apiRoot;
    if (known === apiRoot) return false;
    if (known === undefined) {
      this.write({ ...this.state, apiRoot });
      return false;
    }
    this.write({ ...this.state, apiRoot, handled: 0, recheck: true });
    return true;
  }

  /** Whether a message handed now may be one already taken under another number. */
  get rechecking(): boolean {
    return this.state.recheck === true;
  }

  /** The server's queue was read to its end: what comes now is new. */
  caughtUp(): void {
    if (this.state.recheck) this.write({ ...this.state, recheck: false });
  }

  /** When Telegram last answered a poll, if it ever did for this bot. */
  get lastPolledAt(): number | undefined {
    return this.state.lastPolledAt;
  }

  /**
   * Telegram answered a poll at `now`. Written at most once per
   * `POLLED_AT_PRECISION_MS` (not on every poll), since an absence that
   * matters is measured in hours: the time kept is at most that much older
   * than the truth, so an absence is never under-counted.
   */
  polled(now: number): void {
    const last = this.state.lastPolledAt;
    if (last !== undefined && now >= last && now - last < POLLED_AT_PRECISION_MS) return;
    this.write({ ...this.state, lastPolledAt: now });
  }

  /** The update is given back (the gateway is stopping): Telegram hands it again next time. */
  giveBack(): void {
    if (this.state.inFlight !== null) this.write({ ...this.state, inFlight: null });
  }

  /** Where a chat lives now (following a group's upgrade to a supergroup). */
  current(chatId: string): string {
    let id = chatId;
    for (let hops = 0; hops < 8 && this.state.migrations[id] !== undefined; hops++) id = this.state.migrations[id]!;
    return id;
  }

  /** The id the conversation was first known by (the original group's). */
  original(chatId: string): string {
    let id = chatId;
    for (let hops = 0; hops < 8; hops++) {
      const from = Object.keys(this.state.migrations).find((key) => this.state.migrations[key] === id);
      if (from === undefined) break;
      id = from;
    }
    return id;
  }

  migrate(from: string, to: string): boolean {
    if (from === to || this.state.migrations[from] === to || this.current(to) === from) return false;
    this.write({ ...this.state, migrations: { ...this.state.migrations, [from]: to } });
    return true;
  }

  private write(next: StoredState): void {
    this.state = next;
    writePrivateFile(this.file, JSON.stringify(next) + '\n');
  }
}
