import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../../logger';
import { PRIVATE_DIR_MODE, readJsonOrMoveAside, writePrivateFile } from '../../private-file';

/**
 * Where Homing is in each room's archive (XEP-0313 on the MUC, prosody's
 * mod_muc_mam), per account, in `<dataDir>/xmpp/account-<hash of the JID>.json`
 * (0600, written atomically and fsynced). A room's entry says:
 * - `last`: the room's `<stanza-id>` of the last message taken (saved, or known
 *   to need nothing), moved only in the archive's order and never past a
 *   message not saved yet; after a crash or an outage Homing reads the archive
 *   after it;
 * - `at`: when that message was sent (the archive's stamp, else the time it
 *   arrived), or when Homing first joined: where reading starts again if the
 *   archive no longer knows `last` (it expired: prosody's `muc_log_expires_after`,
 *   one week by default).
 * - `begun`: Homing asked to join the room for the first time at `at` and has
 *   taken nothing from its archive since. Written before the join goes out, so
 *   a stop in between still leaves the place to read from: what was said after
 *   `at`, and nothing older (old talk is not answered).
 * An entry without `begun` means Homing has been in the room before: a later
 * join ends an absence, whose messages a room without an archive cannot give back.
 */
export interface RoomPosition {
  readonly last?: string | undefined;
  readonly at: number;
  readonly begun?: true | undefined;
}

const positionSchema = z.object({ last: z.string().min(1).max(200).optional(), at: z.number().int().nonnegative(), begun: z.literal(true).optional() });
const stateSchema = z.object({ v: z.literal(1), rooms: z.record(z.string().max(3071), positionSchema) });

export class RoomPositions {
  private rooms: Record<string, RoomPosition>;

  constructor(
    /** Undefined: kept in memory only (the Test connection, which joins no room). */
    private readonly file: string | undefined,
    logger: Logger,
  ) {
    const loaded = file !== undefined && existsSync(file)
      ? readJsonOrMoveAside(file, stateSchema, (movedTo) =>
          logger.error('xmpp: the saved room positions could not be read; moved them aside (room messages sent while Homing was away are not fetched this time)', { movedTo }),
        )
      : undefined;
    this.rooms = loaded?.rooms ?? {};
  }

  static forAccount(dataDir: string, jid: string, logger: Logger): RoomPositions {
    const dir = join(dataDir, 'xmpp');
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const key = createHash('sha256').update(jid.toLowerCase()).digest('hex').slice(0, 16);
    return new RoomPositions(join(dir, `account-${key}.json`), logger);
  }

  /** Rooms whose first stay this process began and has not read yet (kept in memory only). */
  private readonly begunHere = new Set<string>();

  get(room: string): RoomPosition | undefined {
    return this.rooms[room];
  }

  /** Our first join of a room, before it goes out. */
  begin(room: string, at: number): void {
    this.set(room, { at, begun: true });
    this.begunHere.add(room);
  }

  /** Whether this process began the room's first stay and has not read it yet (else a begun position is a stopped process's). */
  begunByThisProcess(room: string): boolean {
    return this.begunHere.has(room);
  }

  /** The first stay this process began has been read. */
  firstStayRead(room: string): void {
    this.begunHere.delete(room);
  }

  set(room: string, position: RoomPosition): void {
    const current = this.rooms[room];
    if (current && current.last === position.last && current.at === position.at && current.begun === position.begun) return;
    const rooms = { ...this.rooms, [room]: position };
    if (this.file !== undefined) writePrivateFile(this.file, JSON.stringify({ v: 1, rooms }) + '\n');
    this.rooms = rooms;
  }
}
