import type { Element } from '@xmpp/client';
import type { Clock } from '../../clock';
import type { Logger } from '../../logger';
import { archiveQuery, discoInfo, keepsArchive, NS_MAM, readArchived, readFin, type ArchivedMessage, type ArchiveFrom } from './room-archive';
import { RoomCursor } from './room-cursor';
import type { RoomPositions } from './room-positions';
import type { XmppLibrary } from './load-xmpp-client';
import { describeError } from './send-errors';

/** Called once a room message is saved or needs nothing: its room's archive position may pass it. */
export type Place = () => void;

/** How long one archive request (disco#info, one page) may take. */
const ARCHIVE_TIMEOUT_MS = 20_000;
/** More results than this for one page is a broken or hostile server: the page is read again later. */
const MAX_RESULTS_PER_PAGE = 1_000;
/**
 * A read of the archive by time (`start`) begins this much earlier than the time
 * saved: that time may be this machine's and the archive stamps the server's.
 * Messages in the overlap were taken already and are recognised (maybeSeen).
 */
const SINCE_MARGIN_MS = 2 * 60_000;

/** What a stay needs from the adapter, for as long as it is the room's current one. */
export interface StayHost {
  readonly positions: RoomPositions;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly xml: XmppLibrary['xml'];
  /** An iq to the server (a resumed stream answers what was asked before the drop). */
  request(iq: Element, timeoutMs: number): Promise<Element>;
  /** A message the archive kept, handed on like a live one (maybeSeen); `place` once it is saved or needs nothing. */
  take(message: Element, place: Place): void;
  /** Messages may be lost for good: said once (the adapter's intake-gap event). */
  gap(text: string): void;
  /** Wait before reading again after read `attempt` failed. */
  retryDelay(attempt: number): number;
}

/** One page of a room's archive, in the archive's order. */
interface ArchivePage {
  readonly items: readonly ArchivedMessage[];
  readonly complete: boolean;
  readonly last: string | undefined;
}

/**
 * One stay of the bot in a room, from its join to its leaving (or the stream's
 * end). At the join it reads what the room's archive (XEP-0313) kept after the
 * saved position, page by page until the room says `complete`, then follows the
 * room live; the position moves only past messages saved, in the archive's
 * order (room-cursor.ts). prosody bounces a groupchat stanza to a session that
 * died instead of storing it (mod_smacks handle_unacked_stanzas), so the
 * archive is the only way back to what was said while the bot was away.
 */
export class RoomStay {
  readonly cursor: RoomCursor;
  private ended = false;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private querySeq = 0;
  /** Our archive queries waiting for their answer, and the results the room sent for each so far. */
  private readonly reads = new Map<string, ArchivedMessage[]>();

  constructor(
    private readonly room: string,
    private readonly host: StayHost,
  ) {
    this.cursor = new RoomCursor((id, at) => host.positions.set(room, { last: id, at }));
    this.cursor.beginCatchUp();
  }

  begin(): void {
    void this.catchUp(undefined, 1);
  }

  /** Out of the room (left, removed, the stream gone): this stay no longer reads or moves the position. */
  end(): void {
    this.ended = true;
    clearTimeout(this.retryTimer);
    this.cursor.retire();
  }

  /** A live message's place in the line; 'seen' when the archive handed it already. */
  live(id: string): Place | 'seen' {
    const entry = this.cursor.live(id, this.host.clock.now());
    return entry ? () => this.cursor.done(entry) : 'seen';
  }

  /** A message carrying a MAM result: kept for its page if it answers one of our queries (anything else is dropped). */
  onArchived(stanza: Element): void {
    const queryId = stanza.getChild('result', NS_MAM)?.attrs.queryid ?? '';
    const results = this.reads.get(queryId);
    const item = results ? readArchived(stanza, this.room, queryId) : undefined;
    if (results && item && results.length <= MAX_RESULTS_PER_PAGE) results.push(item);
  }

  /**
   * Until the adapter ends the stay (we left the room, or a new stream replaced
   * this one): a drop that the stream resumes keeps it, so a read cut by it is
   * answered after the resume or tried again.
   */
  private current(): boolean {
    return !this.ended;
  }

  /**
   * Reads the archive from `from` (undefined: from the saved position), handing
   * each message on. A failure is tried again later from where it stopped; live
   * messages wait behind the read meanwhile.
   */
  private async catchUp(resumeFrom: ArchiveFrom | undefined, attempt: number): Promise<void> {
    if (!this.current()) return;
    let from = resumeFrom;
    try {
      if (from === undefined) {
        const saved = this.host.positions.get(this.room);
        // Our first stay: from now on, should we die before the archive answers.
        if (!saved) this.host.positions.set(this.room, { at: this.host.clock.now() });
        const archived = keepsArchive(await this.host.request(discoInfo(this.host.xml, this.room), ARCHIVE_TIMEOUT_MS));
        if (!this.current()) return;
        if (!archived) {
          // Now we have been here: the next join ends an absence.
          if (saved?.begun) this.host.positions.set(this.room, { at: saved.at });
          return this.withoutArchive(saved !== undefined && !saved.begun);
        }
        if (!saved || this.host.positions.begunByThisProcess(this.room)) return await this.firstStay();
        // A first stay a stopped process began, before the archive answered it: what was said since that join.
        if (saved.begun) from = { kind: 'since', at: saved.at };
        else from = saved.last !== undefined ? { kind: 'after', id: saved.last } : { kind: 'since', at: saved.at - SINCE_MARGIN_MS };
      }
      for (;;) {
        const page = await this.readPageOrRestart(from);
        if (!this.current()) return;
        if ('restart' in page) {
          from = page.restart;
          continue;
        }
        for (const item of page.items) this.takeArchived(item);
        if (page.complete) break;
        if (page.last === undefined) {
          this.host.logger.warn('xmpp: a room\u2019s archive said there is more but not where it continues; reading it again at the next join', { room: this.room });
          break;
        }
        from = { kind: 'after', id: page.last };
      }
      this.cursor.endCatchUp();
    } catch (error) {
      if (!this.current()) return;
      const delay = this.host.retryDelay(attempt);
      this.host.logger.warn('xmpp: reading a room\u2019s archive failed; trying again', { room: this.room, error: describeError(error), inMs: delay });
      this.retryTimer = setTimeout(() => void this.catchUp(from, attempt + 1), delay);
    }
  }

  /**
   * One page of the archive; when the archive no longer knows our position
   * (`item-not-found`: it expired after the archive's retention, or the archive
   * was emptied), says so once and where to read instead: from the time of the
   * last message taken.
   */
  private async readPageOrRestart(from: ArchiveFrom): Promise<ArchivePage | { restart: ArchiveFrom }> {
    try {
      return await this.readPage(from);
    } catch (error) {
      if (from.kind !== 'after' || (error as { condition?: unknown }).condition !== 'item-not-found') throw error;
      const at = this.host.positions.get(this.room)?.at ?? this.host.clock.now();
      // Forgotten for good: the next read (and the next run) starts from the time instead.
      this.host.positions.set(this.room, { at });
      this.host.gap(
        `${this.room}: the room\u2019s archive no longer has the last message Homing read there (it keeps messages for a limited time): messages sent there while Homing was away may be lost.`,
      );
      return { restart: { kind: 'since', at: at - SINCE_MARGIN_MS } };
    }
  }

  private async readPage(from: ArchiveFrom): Promise<ArchivePage> {
    const queryId = `homing-mam-${++this.querySeq}`;
    const results: ArchivedMessage[] = [];
    this.reads.set(queryId, results);
    try {
      const answer = await this.host.request(archiveQuery(this.host.xml, this.room, queryId, from), ARCHIVE_TIMEOUT_MS);
      // The results came before the answer; let every one of them through the adapter's handler first.
      await new Promise((resolve) => setImmediate(resolve));
      if (results.length > MAX_RESULTS_PER_PAGE) throw new Error(`the room sent ${results.length} results for one page`);
      return { items: results, ...readFin(answer) };
    } finally {
      this.reads.delete(queryId);
    }
  }

  private takeArchived(item: ArchivedMessage): void {
    const entry = this.cursor.archived(item.id, item.at ?? this.host.clock.now());
    // It came live already: taken then, and its place in the line is this one.
    if (!entry) return;
    this.host.take(item.message, () => this.cursor.done(entry));
  }

  /**
   * Our first stay in an archived room: the position starts at its newest
   * message, which is not taken (old talk); an empty archive leaves it at the
   * time we came.
   */
  private async firstStay(): Promise<void> {
    const page = await this.readPage({ kind: 'newest' });
    if (!this.current()) return;
    const newest = page.items.at(-1);
    const entry = newest ? this.cursor.archived(newest.id, newest.at ?? this.host.clock.now()) : undefined;
    this.cursor.endCatchUp();
    if (entry) this.cursor.done(entry);
    this.host.positions.firstStayRead(this.room);
  }

  /** A room without an archive: what was said there while we were away is gone; said once per absence. */
  private withoutArchive(beenHere: boolean): void {
    this.cursor.endCatchUp();
    if (beenHere) this.host.gap(`${this.room} keeps no archive: messages sent there while Homing was away are lost.`);
  }
}
