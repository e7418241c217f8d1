import { closeSync, existsSync, fdatasyncSync, fstatSync, fsyncSync, openSync, readFileSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Ledger, RecordInput, SendFact } from '../ledger';
import type { Logger } from '../logger';

/** The journal's file, beside homing.db. */
export const UNRECORDED_FILE = 'unrecorded-replies.jsonl';

/** A line of the journal: a reply as the ledger would have recorded it, or a fact of its send. */
export type JournalEntry = { readonly kind: 'reply'; readonly input: RecordInput } | SendFact;

/**
 * Replies sent while the ledger could not record them (Deliverer.sendUnrecorded),
 * in a file of their own beside homing.db, so that a start after a crash or a
 * power cut knows them: the reply as its record would have been, then each
 * part's "on its way" (fdatasynced before the part is sent) and "delivered".
 *
 * Without it such a reply lives only in memory: after a power cut, recovery
 * would take its transcript line for one whose record was lost and answer the
 * message again, plainly. With it, the ledger gets the row it should have had
 * (writeInto) as soon as it works again — in this process, or at the next
 * start — with every part that may have arrived marked, so a resend carries
 * the marker line and a finished reply is simply delivered.
 *
 * Appends are small and rare (only while the ledger fails), so they are
 * synchronous. A line torn by a crash mid-write is skipped when read; writing
 * into the ledger is idempotent (the record is found, a fact already there
 * changes nothing), so a crash while it runs only repeats it.
 */
export class UnrecordedJournal {
  /**
   * Whether the file may hold entries: looked at once here, then kept by this
   * process's own appends and writes, so the delivery loop's every pass asks
   * memory, not the disk.
   */
  private holding: boolean;

  constructor(
    readonly file: string,
    private readonly logger: Logger,
  ) {
    this.holding = existsSync(file);
  }

  /** Appends `entries`, fdatasynced when `durable`; false (logged) when the disk refused. */
  append(entries: readonly JournalEntry[], durable: boolean): boolean {
    let fd: number | undefined;
    try {
      fd = openSync(this.file, 'a+', 0o600);
      const size = fstatSync(fd).size;
      // After a line torn by a crash, a new line starts on a line of its own.
      const lead = endsTorn(fd, size) ? '\n' : '';
      writeSync(fd, lead + entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
      this.holding = true;
      if (durable) {
        fdatasyncSync(fd);
        // A new file is found after a power cut only once its directory entry is on the disk too.
        if (size === 0 && process.platform !== 'win32') syncDirectory(dirname(this.file));
      }
      return true;
    } catch (error) {
      this.logger.error('the journal of replies sent unrecorded could not be written', { file: this.file, error });
      return false;
    } finally {
      if (fd !== undefined) closeQuietly(fd);
    }
  }

  /** Whether the journal holds anything to write into the ledger. */
  holdsReplies(): boolean {
    return this.holding;
  }

  /** The journal's entries, oldest first (a torn or foreign line is skipped, and logged). */
  read(): JournalEntry[] {
    if (!existsSync(this.file)) return [];
    const entries: JournalEntry[] = [];
    for (const line of readFileSync(this.file, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const entry = parseEntry(line);
      if (entry) entries.push(entry);
      else this.logger.warn('skipped a line of the journal of replies sent unrecorded that cannot be read (torn by a crash?)', { file: this.file });
    }
    return entries;
  }

  /**
   * Writes what the journal holds into the ledger — each reply recorded as it
   * would have been, then its facts in order — and removes the file. Returns
   * the number of replies; throws (the file stays) when the ledger refuses.
   */
  writeInto(ledger: Ledger): number {
    const entries = this.read();
    let replies = 0;
    for (const entry of entries) {
      if (entry.kind === 'reply') {
        ledger.recordObligation(entry.input);
        replies++;
      } else {
        ledger.replay(entry);
      }
    }
    // Removed once every entry is in the ledger; a removal a power cut undoes only repeats this.
    unlinkSync(this.file);
    this.holding = false;
    if (replies > 0) this.logger.info('replies sent while the ledger failed are in it now', { replies });
    return replies;
  }
}

function parseEntry(line: string): JournalEntry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const entry = value as Record<string, unknown>;
  switch (entry.kind) {
    case 'reply': {
      const input = entry.input as Record<string, unknown> | undefined;
      const ok =
        typeof input === 'object' &&
        input !== null &&
        ['obligationId', 'sessionKey', 'platform', 'chatId', 'content'].every((key) => typeof input[key] === 'string') &&
        Array.isArray(input.chunks) &&
        input.chunks.every((chunk) => typeof chunk === 'string');
      return ok ? (entry as JournalEntry) : undefined;
    }
    case 'chunk-sending':
      return typeof entry.id === 'string' && Number.isInteger(entry.index) ? (entry as JournalEntry) : undefined;
    case 'chunk-delivered':
      return typeof entry.id === 'string' && Number.isInteger(entry.index) && typeof entry.platformMessageId === 'string' ? (entry as JournalEntry) : undefined;
    case 'delivered':
      return typeof entry.id === 'string' ? (entry as JournalEntry) : undefined;
    default:
      return undefined;
  }
}

/** Whether the file's last byte (of `size`) is not a newline (a line torn by a crash). */
function endsTorn(fd: number, size: number): boolean {
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}

function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeQuietly(fd);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Closed already: nothing to give back.
  }
}
