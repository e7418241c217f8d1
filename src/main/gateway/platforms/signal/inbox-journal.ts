import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync, ftruncateSync } from 'node:fs';
import { join } from 'node:path';
import { digest } from '../platform-module';
import type { Logger } from '../../logger';
import { journaledOffer } from './attachments';
import type { IncomingSignalMessage } from './inbound';

/**
 * Homing's save point for Signal. signal-cli stores a received envelope in its
 * own cache, acknowledges it to the Signal server, hands it to its client and
 * then deletes its copy (ReceiveHelper.receiveMessagesInternal: "store message
 * on disk, before acknowledging receipt to the server", then
 * `cachedMessage[0].delete()` once handled). Nothing asks the client first, so
 * once a message is written to Homing's socket, Homing holds the only copy.
 *
 * So the adapter writes each message here, synchronously and fsynced, in the
 * same turn of the event loop that read it, before anything else happens to
 * it; `done` follows once the pipeline saved it (or refused it for good). At
 * start, what is here without its `done` is handed on again, flagged
 * `maybeSeen` (the pipeline looks for it before saving it twice). A torn last
 * line (a crash mid-write) is skipped; the file is emptied whenever nothing is
 * pending. A message's media offers are written with it (signal-cli's
 * attachment ids, attachments.ts): after a restart the message offers its
 * files as it did, and an offer that does not read back as one is dropped
 * without its message.
 */
export class InboxJournal {
  private readonly fd: number;
  private readonly pending = new Map<string, IncomingSignalMessage>();
  /** After close() nothing is written: the descriptor's number may belong to another file by then. */
  private closed = false;

  private constructor(
    readonly path: string,
    private readonly logger: Logger,
  ) {
    this.fd = openSync(path, 'a+');
    this.load();
  }

  /** The journal of one account, in `<dataDir>/signal/`; throws in words when the directory cannot be written. */
  static forAccount(dataDir: string, account: string, logger: Logger): InboxJournal {
    const dir = join(dataDir, 'signal');
    mkdirSync(dir, { recursive: true });
    return new InboxJournal(join(dir, `inbox-${digest(account)}.jsonl`), logger);
  }

  private load(): void {
    let text = '';
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      return;
    }
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      let entry: { t?: unknown; ref?: unknown; message?: unknown };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        this.logger.warn('signal: skipped a torn line of the inbox journal');
        continue;
      }
      if (typeof entry.ref !== 'string') continue;
      if (entry.t === 'got' && isMessage(entry.message)) this.pending.set(entry.ref, withReadableMedia(entry.message));
      else if (entry.t === 'done') this.pending.delete(entry.ref);
    }
    if (this.pending.size === 0) this.empty();
  }

  /** The messages taken from signal-cli and not yet saved by the pipeline, oldest first. */
  unsaved(): { ref: string; message: IncomingSignalMessage }[] {
    return [...this.pending].map(([ref, message]) => ({ ref, message }));
  }

  has(ref: string): boolean {
    return this.pending.has(ref);
  }

  /** Written and on disk before this returns. */
  got(ref: string, message: IncomingSignalMessage): void {
    if (this.closed || this.pending.has(ref)) return;
    this.append({ t: 'got', ref, message });
    this.pending.set(ref, message);
  }

  /** The pipeline saved it, or it needs nothing: it is not handed on again. */
  done(ref: string): void {
    if (this.closed || !this.pending.delete(ref)) return;
    if (this.pending.size === 0) this.empty();
    else this.append({ t: 'done', ref });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      closeSync(this.fd);
    } catch {
      // Already closed.
    }
  }

  private append(entry: object): void {
    writeSync(this.fd, `${JSON.stringify(entry)}\n`);
    fsyncSync(this.fd);
  }

  private empty(): void {
    ftruncateSync(this.fd, 0);
    fsyncSync(this.fd);
  }
}

function isMessage(value: unknown): value is IncomingSignalMessage {
  const message = value as Partial<IncomingSignalMessage> | null;
  return typeof message === 'object' && message !== null && typeof message.author === 'string' && typeof message.timestamp === 'number' && typeof message.text === 'string';
}

/** The message with only the offers that read back as offers (a damaged or hand-edited line keeps its text). */
function withReadableMedia(message: IncomingSignalMessage): IncomingSignalMessage {
  const { media, ...rest } = message as IncomingSignalMessage & { media?: unknown };
  const offers = (Array.isArray(media) ? media : []).map(journaledOffer).filter((offer) => offer !== undefined);
  return offers.length > 0 ? { ...rest, media: offers } : rest;
}
