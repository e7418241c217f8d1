import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../../logger';
import { PRIVATE_DIR_MODE, readJsonOrMoveAside, writePrivateFile } from '../../private-file';

/**
 * What the email adapter must remember across restarts, per account, in
 * `<dataDir>/email/<account>.json` (0600, written atomically and fsynced):
 * - per folder, the UIDVALIDITY it was read under and `lastUid`, the highest
 *   UID whose message is saved (or was ignored for good). A message is known
 *   by (folder, UIDVALIDITY, UID); a new UIDVALIDITY means the server
 *   renumbered the folder, and the old position says nothing any more.
 * - `inFlight`: the UID being handed to the pipeline right now. Found at
 *   start-up, the process died between handing and saving it: when that
 *   message comes again it is looked for in its conversation first.
 * - `begunAt`: per folder never read yet, when a gateway first set out to read
 *   it. A gateway stopped before its first read saved a position leaves it;
 *   the next one then reads the mail that arrived since, instead of starting
 *   again after the newest message and skipping it.
 * - `threads`: per thread root, the latest subject and message id, so a reply
 *   (even one recovered after a crash, which knows only its thread) carries
 *   `Re: <subject>` and `In-Reply-To`. The oldest are forgotten past a bound.
 */
const positionSchema = z.object({
  uidValidity: z.string().regex(/^\d{1,20}$/),
  lastUid: z.number().int().min(0).safe(),
  inFlight: z.number().int().min(1).safe().nullable(),
});
const threadSchema = z.object({ subject: z.string().max(2000), last: z.string().max(2000), at: z.number() });
const stateSchema = z.object({
  v: z.literal(1),
  folders: z.record(z.string(), positionSchema),
  begunAt: z.record(z.string(), z.number().int().min(0)).optional(),
  threads: z.record(z.string(), threadSchema),
});
type StoredState = z.output<typeof stateSchema>;
export type ThreadMemory = z.output<typeof threadSchema>;

const MAX_THREADS = 2_000;

export class MailboxState {
  private state: StoredState;
  /** Per folder, the UID that was in flight when the previous process stopped. */
  private readonly interrupted = new Map<string, number>();
  /** Folders whose first read an earlier process set out on (and never saved a position for). */
  private readonly begunEarlier: ReadonlyMap<string, number>;

  constructor(
    private readonly file: string,
    logger: Logger,
  ) {
    const loaded = existsSync(file)
      ? readJsonOrMoveAside(file, stateSchema, (movedTo) =>
          logger.error('email: the saved mailbox position could not be read; moved it aside (only new mail is read from now on)', { movedTo }),
        )
      : undefined;
    this.state = loaded ?? { v: 1, folders: {}, threads: {} };
    for (const [folder, position] of Object.entries(this.state.folders)) if (position.inFlight !== null) this.interrupted.set(folder, position.inFlight);
    this.begunEarlier = new Map(Object.entries(this.state.begunAt ?? {}).filter(([folder]) => !this.knows(folder)));
  }

  /** One file per account (server and login), so two accounts never share a position. */
  static forAccount(dataDir: string, host: string, user: string, logger: Logger): MailboxState {
    const dir = join(dataDir, 'email');
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const account = createHash('sha256').update(`${host.toLowerCase()}\n${user}`).digest('hex').slice(0, 16);
    return new MailboxState(join(dir, `account-${account}.json`), logger);
  }

  /** The last handled UID in `folder` under this UIDVALIDITY; undefined when never read under it. */
  lastUid(folder: string, uidValidity: string): number | undefined {
    const position = this.state.folders[folder];
    return position && position.uidValidity === uidValidity ? position.lastUid : undefined;
  }

  /** Whether the folder was read before (under any UIDVALIDITY). */
  knows(folder: string): boolean {
    return Object.hasOwn(this.state.folders, folder);
  }

  /**
   * Before the first read of a folder never read: when this gateway set out, so
   * that one stopped before that read saved a position does not make the next
   * skip what arrived in between. Kept from the first such start.
   */
  setOut(folder: string, at: number): void {
    if (this.knows(folder) || Object.hasOwn(this.state.begunAt ?? {}, folder)) return;
    this.write({ ...this.state, begunAt: { ...this.state.begunAt, [folder]: at } });
  }

  /** When an earlier process set out to read this never-read folder: its first read starts there. */
  setOutEarlier(folder: string): number | undefined {
    return this.begunEarlier.get(folder);
  }

  /** Starts (or restarts, after a UIDVALIDITY change) a folder's position: messages after `lastUid` are new. */
  startAt(folder: string, uidValidity: string, lastUid: number): void {
    this.interrupted.delete(folder);
    const { [folder]: _started, ...begunAt } = this.state.begunAt ?? {};
    this.write({ ...this.state, folders: { ...this.state.folders, [folder]: { uidValidity, lastUid, inFlight: null } }, begunAt });
  }

  /** Whether this UID was being handed on when the previous process died. */
  wasInFlight(folder: string, uid: number): boolean {
    return this.interrupted.get(folder) === uid;
  }

  /** Before a message is handed on: a crash from here leaves a trace; the thread's subject is remembered in the same write. */
  begin(folder: string, uid: number, thread: { root: string; subject: string; last: string; at: number }): void {
    const position = this.position(folder);
    const threads = { ...this.state.threads, [thread.root]: { subject: thread.subject, last: thread.last, at: thread.at } };
    const keys = Object.keys(threads);
    if (keys.length > MAX_THREADS) {
      for (const key of keys.sort((a, b) => threads[a]!.at - threads[b]!.at).slice(0, keys.length - MAX_THREADS)) delete threads[key];
    }
    this.write({ ...this.state, folders: { ...this.state.folders, [folder]: { ...position, inFlight: uid } }, threads });
  }

  /** The message is saved (or will never be taken): it is not handled again. */
  done(folder: string, uid: number): void {
    const position = this.position(folder);
    if (uid <= position.lastUid && position.inFlight === null) return;
    if (this.interrupted.get(folder) === uid) this.interrupted.delete(folder);
    this.write({ ...this.state, folders: { ...this.state.folders, [folder]: { ...position, lastUid: Math.max(position.lastUid, uid), inFlight: null } } });
  }

  /** The message is given back (the gateway is stopping): it is read again next time. */
  giveBack(folder: string): void {
    const position = this.position(folder);
    if (position.inFlight !== null) this.write({ ...this.state, folders: { ...this.state.folders, [folder]: { ...position, inFlight: null } } });
  }

  thread(root: string): ThreadMemory | undefined {
    return Object.hasOwn(this.state.threads, root) ? this.state.threads[root] : undefined;
  }

  private position(folder: string): z.output<typeof positionSchema> {
    const position = this.state.folders[folder];
    if (!position) throw new Error(`email: no position for folder ${folder}`);
    return position;
  }

  private write(next: StoredState): void {
    writePrivateFile(this.file, JSON.stringify(next) + '\n');
    this.state = next;
  }
}
