import { closeSync, constants, createReadStream, existsSync, fstatSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { PRIVATE_DIR_MODE, writePrivateFile } from '../private-file';
import { resolveInside } from '../session/path-safety';
import { MediaFetchError, tooLarge, type MediaBody, type MediaKind, type MediaOffer } from './media';
import { MEDIA_DIR } from './media-store';
import { isImageMime, sniffMime } from './mime';

/** Where the window's uploads wait until their message takes them: `media/uploads/`. */
const UPLOADS = 'uploads';
/** How a message of the window's own chat names an upload (MediaOffer.source). */
const SOURCE_PREFIX = 'upload:';
/** How long an upload no message took is kept. */
export const UPLOAD_KEEP_MS = 24 * 60 * 60_000;

const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

const aboutSchema = z.object({ name: z.string().max(1024), mime: z.string().max(255).optional(), size: z.number().int().min(0) });

/** An upload the window got wrong (an offset that is not the bytes received, too large, unknown): said in words. */
export class UploadError extends Error {
  override readonly name = 'UploadError';
}

/**
 * Files the window's own chat sends (its attach button, drag and drop). The
 * window sends a file in pieces over the API (`uploadLocalFile`), each
 * appended at the offset it names, counted against the file limit; the last
 * piece makes it complete (`<id>.bin` and `<id>.json`). A message then offers
 * it like any platform's file (`upload:<id>`), and the media store fetches it
 * into its conversation's folder as it fetches any other. Uploads no message
 * took are removed after a day.
 */
export class LocalUploads {
  private readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, MEDIA_DIR, UPLOADS);
  }

  /** Appends one piece; returns the bytes received so far. */
  append(piece: { readonly uploadId: string; readonly offset: number; readonly data: Buffer; readonly name: string; readonly mime?: string | undefined; readonly done?: boolean | undefined }, maxBytes: number): number {
    mkdirSync(this.dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    if (existsSync(resolveInside(this.dir, piece.uploadId, '.json'))) throw new UploadError('that upload is complete already: start a new one');
    const part = resolveInside(this.dir, piece.uploadId, '.part');
    const fd = openSync(part, constants.O_WRONLY | constants.O_CREAT | NO_FOLLOW, 0o600);
    let received: number;
    try {
      received = fstatSync(fd).size;
      if (piece.offset !== received) throw new UploadError(`the piece starts at byte ${piece.offset}, but ${received} bytes have arrived: send from ${received}`);
      if (received + piece.data.length > maxBytes) {
        closeSync(fd);
        rmSync(part, { force: true });
        throw tooLarge(received + piece.data.length, maxBytes);
      }
      writeSync(fd, piece.data, 0, piece.data.length, received);
      received += piece.data.length;
      if (piece.done) fsyncSync(fd);
    } finally {
      try {
        closeSync(fd);
      } catch {
        // Closed above, before removing a file over the limit.
      }
    }
    if (piece.done) {
      renameSync(part, resolveInside(this.dir, piece.uploadId, '.bin'));
      writePrivateFile(resolveInside(this.dir, piece.uploadId, '.json'), JSON.stringify({ name: piece.name, ...(piece.mime ? { mime: piece.mime } : {}), size: received }));
    }
    return received;
  }

  /** What a message sending a complete upload offers; throws an UploadError when there is no such upload. */
  offer(uploadId: string): MediaOffer {
    let about: z.infer<typeof aboutSchema>;
    try {
      about = aboutSchema.parse(JSON.parse(readFileSync(resolveInside(this.dir, uploadId, '.json'), 'utf8')));
    } catch {
      throw new UploadError(`no complete upload ${uploadId}: upload the file (with done: true) before sending it`);
    }
    const head = Buffer.alloc(64);
    const fd = openSync(resolveInside(this.dir, uploadId, '.bin'), constants.O_RDONLY | NO_FOLLOW);
    try {
      readHead(fd, head);
    } finally {
      closeSync(fd);
    }
    const sniffed = sniffMime(head);
    return { kind: kindOf(sniffed, about.mime), source: `${SOURCE_PREFIX}${uploadId}`, name: about.name, size: about.size, ...(about.mime ? { mime: about.mime } : {}) };
  }

  /** The bytes of an upload a message offered (the local adapter's openMedia). */
  async open(source: string, maxBytes: number): Promise<MediaBody> {
    const uploadId = source.startsWith(SOURCE_PREFIX) ? source.slice(SOURCE_PREFIX.length) : '';
    let path: string;
    let size: number;
    try {
      path = resolveInside(this.dir, uploadId, '.bin');
      size = statSync(path).size;
    } catch {
      throw new MediaFetchError('the uploaded file is gone (uploads no message took are kept a day)', true);
    }
    if (size > maxBytes) throw tooLarge(size, maxBytes);
    return { size, stream: createReadStream(path) };
  }

  /** Removes uploads (complete or not) last written before `cutoff`. */
  removeOlderThan(cutoff: number): number {
    let removed = 0;
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return 0;
    }
    for (const name of names) {
      const path = join(this.dir, name);
      try {
        if (statSync(path).mtimeMs >= cutoff) continue;
        rmSync(path, { force: true });
        if (name.endsWith('.json')) removed += 1;
      } catch {
        // Gone meanwhile.
      }
    }
    return removed;
  }
}

/** A file's kind from the type its bytes show, else the one the browser named. */
function kindOf(sniffed: string | undefined, declared: string | undefined): MediaKind {
  if (sniffed && isImageMime(sniffed)) return 'image';
  const type = sniffed ?? declared ?? '';
  if (type.startsWith('audio/')) return 'audio';
  if (type.startsWith('video/')) return 'video';
  return 'document';
}

function readHead(fd: number, into: Buffer): void {
  let at = 0;
  while (at < into.length) {
    const read = readSync(fd, into, at, into.length - at, at);
    if (read <= 0) break;
    at += read;
  }
}
