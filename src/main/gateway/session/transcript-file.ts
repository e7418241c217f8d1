import { close, closeSync, constants, existsSync, fdatasync, fstatSync, fsync, fsyncSync, ftruncateSync, open, openSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { SharedSync, type SyncFile } from '../db/shared-sync';

/**
 * Byte-level I/O of append-only JSONL files. A line is complete only when its
 * newline is on disk: whatever follows the last newline is the torn remains of
 * an append that was interrupted (kill -9, power loss) and is never read as a
 * record. Splitting on the byte 0x0A is safe in UTF-8, which never uses it
 * inside a multi-byte character.
 */

const CHUNK = 64 * 1024;
const NEWLINE = 0x0a;
// A planted symlink must not redirect a transcript write (absent on Windows).
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

/** Open transcripts kept at most; the least recently written is closed beyond it. */
const MAX_OPEN = 64;

interface OpenTranscript {
  readonly fd: number;
  size: number;
  /** Appends waiting for an fdatasync: the file is not closed under them. */
  syncing: number;
  /** Created by this handle and its directory entry not yet synced. */
  newFile: boolean;
  /** Its fdatasyncs, shared by the appends made while one runs. */
  readonly syncs: SharedSync;
}

/**
 * The transcripts being written, each kept open while its conversation is
 * active (instead of open + stat + close per append), least recently written
 * closed first beyond MAX_OPEN.
 *
 * `append` writes complete lines before it returns — from then on they survive
 * the process being killed (the OS has them). With `durable` it also returns a
 * promise that settles once they are on disk (an fdatasync, run off the event
 * loop; for a new file its directory entry too), for what must survive a power
 * cut before Homing acts on it. An fdatasync covers everything written to the
 * file before it, so lines appended without one become durable with the next,
 * and syncs are shared: while one runs, every durable append waits for one
 * more that starts when it ends — a burst of messages to one conversation (a
 * platform handing over what it held during an outage) costs two fdatasyncs,
 * not one per message, and leaves libuv's threads to the other conversations
 * and the ledger's log.
 */
export class TranscriptFiles {
  private readonly files = new Map<string, OpenTranscript>();
  private readonly fdatasync: SyncFile;

  /** `fdatasync`: node:fs's, or a test's that counts or fails them. */
  constructor(options: { readonly fdatasync?: SyncFile } = {}) {
    this.fdatasync = options.fdatasync ?? fdatasync;
  }

  /** Whether the file is empty or absent (a new transcript starts with its header). Opens it for the append to come. */
  isEmpty(path: string): boolean {
    return this.open(path).size === 0;
  }

  append(path: string, text: string, durable: boolean): Promise<void> {
    const file = this.open(path);
    try {
      const bytes = Buffer.from(text, 'utf8');
      let written = 0;
      while (written < bytes.length) written += writeSync(file.fd, bytes, written, bytes.length - written);
      file.size += bytes.length;
    } catch (error) {
      // Part of a line may be on disk: the caller repairs the tail; this handle is dropped.
      this.forget(path);
      throw error;
    }
    this.evict();
    if (!durable) return Promise.resolve();
    const opened = file;
    opened.syncing += 1;
    const synced = opened.syncs.sync();
    // A new file's directory entry goes to disk with its first durable line.
    const directory = opened.newFile ? syncDirectory(dirname(path)) : Promise.resolve();
    opened.newFile = false;
    return Promise.all([synced, directory])
      .then(() => undefined)
      .finally(() => {
        opened.syncing -= 1;
        if (!this.files.has(path) || this.files.get(path) !== opened) this.closeIfIdle(opened);
      });
  }

  /** The file's open handle, most recently used last (the map's order is the eviction order). */
  private open(path: string): OpenTranscript {
    let file = this.files.get(path);
    if (file) {
      this.files.delete(path);
    } else {
      const newFile = !existsSync(path);
      const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NO_FOLLOW, 0o600);
      const syncs = new SharedSync(() => new Promise<void>((resolve, reject) => this.fdatasync(fd, (error) => (error ? reject(error) : resolve()))));
      file = { fd, size: fstatSync(fd).size, syncing: 0, newFile, syncs };
    }
    this.files.set(path, file);
    return file;
  }

  /** Closes a file's handle (before something else rewrites the file). */
  forget(path: string): void {
    const file = this.files.get(path);
    if (!file) return;
    this.files.delete(path);
    this.closeIfIdle(file);
  }

  /** Closes every handle (once their fdatasyncs are done). */
  closeAll(): void {
    for (const path of [...this.files.keys()]) this.forget(path);
  }

  private evict(): void {
    for (const [path, file] of this.files) {
      if (this.files.size <= MAX_OPEN) return;
      if (file.syncing > 0) continue;
      this.files.delete(path);
      this.closeIfIdle(file);
    }
  }

  private closeIfIdle(file: OpenTranscript): void {
    if (file.syncing > 0) return; // closed when its last fdatasync settles
    try {
      closeSync(file.fd);
    } catch {
      // Already closed.
    }
  }
}

/** fsync of a directory, off the event loop (a new file's entry must be on disk too). */
function syncDirectory(dir: string): Promise<void> {
  if (process.platform === 'win32') return Promise.resolve();
  return new Promise((resolve, reject) => {
    open(dir, 'r', (openError, fd) => {
      if (openError) return reject(openError);
      fsync(fd, (syncError) => close(fd, () => (syncError ? reject(syncError) : resolve())));
    });
  });
}

/**
 * Cuts a torn last line off, so the next append starts on a line of its own.
 * Only the file's single writer may call this: to a concurrent reader, a line
 * being written right now looks exactly like a torn one. Returns the bytes dropped.
 */
export function repairTornTail(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | NO_FOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    const keep = completeLength(fd, size);
    if (keep === size) return 0;
    ftruncateSync(fd, keep);
    fsyncSync(fd);
    return size - keep;
  } finally {
    closeSync(fd);
  }
}

/** The length of the file up to and including its last newline. */
function completeLength(fd: number, size: number): number {
  let pos = size;
  while (pos > 0) {
    const start = Math.max(0, pos - CHUNK);
    const chunk = readAt(fd, start, pos - start);
    const nl = chunk.lastIndexOf(NEWLINE);
    if (nl >= 0) return start + nl + 1;
    pos = start;
  }
  return 0;
}

export interface BackwardRead {
  /** Bytes read from the file: what the cost of a tail read is measured in. */
  readonly bytesRead: number;
}

/**
 * Visits complete lines from the last to the first, reading the file from its
 * end in chunks, until `visit` returns false. The cost depends on how much is
 * visited, not on the file's length.
 */
export function readLinesBackward(path: string, visit: (line: string) => boolean): BackwardRead {
  const fd = openForRead(path);
  if (fd === undefined) return { bytesRead: 0 };
  let bytesRead = 0;
  try {
    let pos = fstatSync(fd).size;
    let carry: Buffer | undefined;
    let pastTornTail = false;
    while (pos > 0) {
      const start = Math.max(0, pos - CHUNK);
      const chunk = readAt(fd, start, pos - start);
      bytesRead += chunk.length;
      pos = start;
      const data = carry ? Buffer.concat([chunk, carry]) : chunk;
      let end = data.length;
      while (end > 0) {
        const nl = data.lastIndexOf(NEWLINE, end - 1);
        if (nl < 0) break;
        if (pastTornTail && nl + 1 < end && !visit(data.toString('utf8', nl + 1, end))) return { bytesRead };
        pastTornTail = true; // the bytes after the file's last newline are not a line
        end = nl;
      }
      carry = data.subarray(0, end);
    }
    if (pastTornTail && carry && carry.length > 0) visit(carry.toString('utf8'));
    return { bytesRead };
  } finally {
    closeSync(fd);
  }
}

/** Visits complete lines from the first to the last until `visit` returns false. */
export function readLinesForward(path: string, visit: (line: string) => boolean): void {
  const fd = openForRead(path);
  if (fd === undefined) return;
  try {
    const slices = forwardLines(fd, visit, CHUNK);
    while (!slices.next().done);
  } finally {
    closeSync(fd);
  }
}

/**
 * `readLinesForward` in slices: after every `sliceBytes` read it yields to the
 * event loop (setImmediate), so a transcript of many megabytes read for the
 * window never holds the gateway for long.
 */
export async function readLinesForwardSliced(path: string, visit: (line: string) => boolean, sliceBytes = CHUNK): Promise<void> {
  const fd = openForRead(path);
  if (fd === undefined) return;
  try {
    for (const slices = forwardLines(fd, visit, sliceBytes); !slices.next().done; ) await new Promise((resolve) => setImmediate(resolve));
  } finally {
    closeSync(fd);
  }
}

/**
 * Visits the complete lines of `fd` from the first, `sliceBytes` read at a
 * time, pausing (a `yield`) after each slice; ends when `visit` returns false
 * or the file does. A remainder without a newline is a torn tail: not a line.
 */
function* forwardLines(fd: number, visit: (line: string) => boolean, sliceBytes: number): Generator<void, void, void> {
  const size = fstatSync(fd).size;
  let pos = 0;
  let carry: Buffer | undefined;
  while (pos < size) {
    const chunk = readAt(fd, pos, Math.min(sliceBytes, size - pos));
    if (chunk.length === 0) return; // the file shrank under us
    pos += chunk.length;
    const data = carry ? Buffer.concat([carry, chunk]) : chunk;
    let start = 0;
    for (let nl = data.indexOf(NEWLINE); nl >= 0; nl = data.indexOf(NEWLINE, start)) {
      if (nl > start && !visit(data.toString('utf8', start, nl))) return;
      start = nl + 1;
    }
    carry = data.subarray(start);
    yield;
  }
}

function openForRead(path: string): number | undefined {
  try {
    return openSync(path, constants.O_RDONLY | NO_FOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const n = readSync(fd, buffer, filled, length - filled, position + filled);
    if (n === 0) break; // the file shrank under us
    filled += n;
  }
  return buffer.subarray(0, filled);
}
