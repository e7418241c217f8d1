import type { ImapFlow } from 'imapflow';
import type { Attachment } from 'mailparser';
import { MediaFetchError, tooLarge, type MediaBody, type MediaOffer } from '../../media/media';
import type { Logger } from '../../logger';
import { isAttachedFile, parseMailFileSource, type MailFileLocator } from './attachments';
import { imapWords, isAuthFailure, isMissingFolder } from './imap-errors';
import { parseMime } from './inbound';
import type { MailLibs } from './load-mail-libs';

export interface EmailMediaOpenerOptions {
  /** A fresh IMAP client with the adapter's settings (server, login, limits); not yet connected. */
  readonly newClient: () => Promise<ImapFlow>;
  readonly libs: () => Promise<MailLibs>;
  /** The adapter's limit on a message read whole (config `maxMessageBytes`). */
  readonly maxMessageBytes: number;
  /** Takes the password out of any words that leave here. */
  readonly redact: (text: string) => string;
  readonly logger: Logger;
}

/** How long the last message's files are kept in memory for the next file of the same message. */
const KEEP_MS = 60_000;
/** Bytes handed on per chunk of a file's stream. */
const CHUNK = 64 * 1024;

/**
 * Opens a file a mail offered (EmailAdapter.openMedia): the message is fetched
 * again over its own short IMAP connection — the folder opened read-only
 * (EXAMINE) and the message read with BODY.PEEK, so nothing is marked read —
 * parsed with intake's parser, and the file's bytes handed on.
 *
 * Why fetch again rather than keep the bytes from intake: a message is saved
 * with references only, and the mail server already keeps the mail; a restart
 * between intake and fetch loses nothing. The cost is one message read per
 * file, so the last message's files are kept for a minute: a mail with ten
 * photos is read once.
 *
 * For good: a locator this adapter did not write, a folder that is gone or
 * renumbered (UIDVALIDITY changed: the UID may name another mail now), a
 * message deleted, a file no longer in it, a file or message over the limits.
 * Tried again: the server unreachable or refusing the login, the connection lost.
 */
export class EmailMediaOpener {
  private last: { readonly key: string; readonly files: ReadonlyMap<number, Attachment>; readonly timer: ReturnType<typeof setTimeout> } | undefined;

  constructor(private readonly options: EmailMediaOpenerOptions) {}

  async open(offer: Pick<MediaOffer, 'kind' | 'source' | 'mime' | 'name'>, options: { readonly signal: AbortSignal; readonly maxBytes: number }): Promise<MediaBody> {
    const where = parseMailFileSource(offer.source);
    if (!where) throw new MediaFetchError('the file has no email locator Homing can use', true);
    const files = await this.filesOf(where, options.signal);
    const file = files.get(where.index);
    if (!file) throw new MediaFetchError('the attachment is no longer in the message', true);
    if (file.size > options.maxBytes) throw tooLarge(file.size, options.maxBytes);
    return { size: file.size, mime: file.contentType, stream: chunks(file.content, options.signal) };
  }

  /** Forgets the kept message (the adapter disconnects). */
  clear(): void {
    if (this.last) clearTimeout(this.last.timer);
    this.last = undefined;
  }

  private async filesOf(where: MailFileLocator, signal: AbortSignal): Promise<ReadonlyMap<number, Attachment>> {
    const key = `${where.folder}\n${where.uidValidity}\n${where.uid}`;
    if (this.last?.key === key) return this.last.files;
    const files = await this.fetchFiles(where, signal);
    this.clear();
    const timer = setTimeout(() => {
      if (this.last?.key === key) this.last = undefined;
    }, KEEP_MS);
    timer.unref?.();
    this.last = { key, files, timer };
    return files;
  }

  private async fetchFiles(where: MailFileLocator, signal: AbortSignal): Promise<ReadonlyMap<number, Attachment>> {
    if (signal.aborted) throw new MediaFetchError('the fetch was stopped', false);
    const libs = await this.options.libs();
    const client = await this.options.newClient();
    client.on('error', (error: Error) => this.options.logger.debug('email: IMAP error while fetching a file', { error: this.options.redact(describe(error)) }));
    const stop = () => client.close();
    signal.addEventListener('abort', stop, { once: true });
    try {
      let source: Buffer;
      try {
        source = await this.fetchSource(client, where);
      } finally {
        // LOGOUT politely, never waiting on a server that is gone.
        if (client.usable) await Promise.race([client.logout().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2_000).unref?.())]);
        client.close();
      }
      if (signal.aborted) throw new MediaFetchError('the fetch was stopped', false);
      const parsed = await parseMime(source, libs);
      const files = new Map<number, Attachment>();
      parsed.attachments.forEach((attachment, index) => {
        if (isAttachedFile(attachment)) files.set(index, attachment);
      });
      return files;
    } catch (error) {
      if (error instanceof MediaFetchError) throw error;
      if (signal.aborted) throw new MediaFetchError('the fetch was stopped', false);
      if (isAuthFailure(error)) throw new MediaFetchError('the IMAP server refused the login', false);
      throw new MediaFetchError(`the mail server could not hand over the message (${this.options.redact(imapWords(error))})`, false);
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  private async fetchSource(client: ImapFlow, where: MailFileLocator): Promise<Buffer> {
    await client.connect();
    try {
      await client.mailboxOpen(where.folder, { readOnly: true });
    } catch (error) {
      if (isMissingFolder(error)) throw new MediaFetchError('the message is no longer on the server (its folder is gone)', true);
      throw error;
    }
    const box = client.mailbox;
    if (!box) throw new Error('the folder did not open');
    if (String(box.uidValidity) !== String(where.uidValidity)) throw new MediaFetchError('the message is no longer on the server (its folder was renumbered)', true);
    const uid = String(where.uid);
    const meta = await client.fetchOne(uid, { uid: true, size: true }, { uid: true });
    if (!meta || meta.uid !== where.uid) throw new MediaFetchError('the message is no longer on the server', true);
    if ((meta.size ?? 0) > this.options.maxMessageBytes) throw new MediaFetchError('the message is larger than this assistant reads (maxMessageBytes)', true);
    // imapflow asks for `source` as BODY.PEEK[]: reading it does not set \Seen.
    const fetched = await client.fetchOne(uid, { uid: true, source: true }, { uid: true });
    if (!fetched || !fetched.source) throw new MediaFetchError('the message is no longer on the server', true);
    return fetched.source;
  }
}

/** A file's bytes as a stream of chunks, ending early once the fetch is stopped. */
async function* chunks(content: Buffer, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < content.length; at += CHUNK) {
    if (signal.aborted) return;
    yield content.subarray(at, at + CHUNK);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
