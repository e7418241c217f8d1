import { randomBytes } from 'node:crypto';
import { closeSync, constants, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { systemClock, type Clock } from '../clock';
import { PRIVATE_DIR_MODE, writePrivateFile } from '../private-file';
import { resolveInside } from '../session/path-safety';
import { MAX_MEDIA_PER_MESSAGE, MediaFetchError, mediaName, tooLarge, type MediaOffer, type MediaOpener, type MediaRef } from './media';
import { extensionOf, sniffMime } from './mime';

/** The folder of fetched media in the data directory: `media/<session id>/<media id><ext>`. */
export const MEDIA_DIR = 'media';

const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

/** What is kept beside a fetched file (`<id>.json`): written last, so its presence means the file is complete. */
const metaSchema = z.object({
  mime: z.string().max(255),
  size: z.number().int().min(0),
  fetchedAt: z.number(),
});
export type MediaMeta = z.infer<typeof metaSchema>;

/** A file on disk, ready for the agent. */
export interface FetchedMedia extends MediaMeta {
  readonly path: string;
}

export interface FetchOptions {
  readonly signal: AbortSignal;
  readonly maxBytes: number;
  /** Tries in all (temporary failures are tried again), default 3. */
  readonly attempts?: number;
  /** Waits between tries, ms (default 1 s, then 4 s). */
  readonly backoffMs?: readonly number[];
}

/**
 * The data directory's fetched media. A file is streamed into `<id>.part`
 * (0600), counted against the limit as it arrives, fsynced and renamed to
 * `<id><ext>`; then `<id>.json` says its type and size. Every path is built
 * from a session id and a media id that pass path-safety's checks and is
 * resolved inside the folder. Files are named by the reference's random id,
 * never by anything a sender chose.
 */
export class MediaStore {
  readonly root: string;

  constructor(
    dataDir: string,
    /** When a file is fetched, for the retention time. */
    private readonly clock: Clock = systemClock,
  ) {
    this.root = join(dataDir, MEDIA_DIR);
  }

  /** New references for what a message offers: random ids, names and types bounded; at most MAX_MEDIA_PER_MESSAGE. */
  static refsFor(offers: readonly MediaOffer[] | undefined): MediaRef[] {
    return (offers ?? []).slice(0, MAX_MEDIA_PER_MESSAGE).map((offer) => ({
      id: randomBytes(8).toString('hex'),
      kind: offer.kind,
      source: offer.source.slice(0, 8192),
      ...(offer.mime && /^[\w.+-]+\/[\w.+-]+$/.test(offer.mime) ? { mime: offer.mime.toLowerCase().slice(0, 255) } : {}),
      ...(mediaName(offer.name) !== undefined ? { name: mediaName(offer.name) } : {}),
      ...(offer.size !== undefined && Number.isSafeInteger(offer.size) && offer.size >= 0 ? { size: offer.size } : {}),
      ...(offer.durationS !== undefined && Number.isFinite(offer.durationS) && offer.durationS >= 0 ? { durationS: offer.durationS } : {}),
    }));
  }

  /** The session's media folder (not created). */
  dirOf(sessionId: string): string {
    return resolveInside(this.root, sessionId);
  }

  /** The file and its type when it was fetched completely, else undefined. */
  fetched(sessionId: string, ref: Pick<MediaRef, 'id'>): FetchedMedia | undefined {
    const dir = this.dirOf(sessionId);
    let meta: MediaMeta;
    try {
      const parsed = metaSchema.safeParse(JSON.parse(readFileSync(resolveInside(dir, ref.id, '.json'), 'utf8')));
      if (!parsed.success) return undefined;
      meta = parsed.data;
    } catch {
      return undefined;
    }
    const path = resolveInside(dir, ref.id, extensionOf(meta.mime));
    return existsSync(path) ? { ...meta, path } : undefined;
  }

  /**
   * Where a file stands: `ready` (fetched), `expired` (removed by retention),
   * `failed` (its last fetch failed: `failure` says why), `pending` (not
   * fetched yet).
   */
  state(sessionId: string, ref: Pick<MediaRef, 'id'>): 'ready' | 'expired' | 'failed' | 'pending' {
    if (this.fetched(sessionId, ref)) return 'ready';
    try {
      const dir = this.dirOf(sessionId);
      if (existsSync(resolveInside(dir, ref.id, '.expired'))) return 'expired';
      return existsSync(resolveInside(dir, ref.id, '.failed')) ? 'failed' : 'pending';
    } catch {
      return 'pending';
    }
  }

  /** Why the last fetch of a file failed, in words (what the agent was told), when it did. */
  failure(sessionId: string, ref: Pick<MediaRef, 'id'>): string | undefined {
    try {
      return readFileSync(resolveInside(this.dirOf(sessionId), ref.id, '.failed'), 'utf8');
    } catch {
      return undefined;
    }
  }

  /** Notes that fetching a file failed, and why (the window shows it); a later fetch that works leaves it behind. */
  markFailed(sessionId: string, ref: Pick<MediaRef, 'id'>, why: string): void {
    writePrivateFile(resolveInside(this.ensureDir(sessionId), ref.id, '.failed'), why.slice(0, 1_000));
  }

  /** Text worked out from a file (a transcript, a document's text), kept beside it as `<id>.<what>.txt`. */
  derived(sessionId: string, ref: Pick<MediaRef, 'id'>, what: 'transcript' | 'text'): string | undefined {
    try {
      return readFileSync(resolveInside(this.dirOf(sessionId), ref.id, `.${what}.txt`), 'utf8');
    } catch {
      return undefined;
    }
  }

  saveDerived(sessionId: string, ref: MediaRef, what: 'transcript' | 'text', text: string): void {
    const dir = this.ensureDir(sessionId);
    writePrivateFile(resolveInside(dir, ref.id, `.${what}.txt`), text);
  }

  /**
   * Fetches a file once (a file fetched before is returned as it is): temporary
   * failures are tried again after a wait; a permanent one, the limit, or the
   * last try's failure is thrown as a MediaFetchError in words.
   */
  async fetch(sessionId: string, ref: MediaRef, open: MediaOpener | undefined, options: FetchOptions): Promise<FetchedMedia> {
    const done = this.fetched(sessionId, ref);
    if (done) return done;
    if (ref.size !== undefined && ref.size > options.maxBytes) throw tooLarge(ref.size, options.maxBytes);
    const attempts = options.attempts ?? 3;
    const backoff = options.backoffMs ?? [1_000, 4_000];
    let last: MediaFetchError | undefined;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) await wait(backoff[Math.min(attempt - 1, backoff.length - 1)] ?? 1_000, options.signal);
      if (options.signal.aborted) throw new MediaFetchError('the fetch was stopped', false);
      try {
        if (!open) throw new MediaFetchError('its platform is not set up to fetch files now', false);
        return await this.download(sessionId, ref, open, options);
      } catch (error) {
        last = error instanceof MediaFetchError ? error : new MediaFetchError(`the download failed (${error instanceof Error ? error.message : String(error)})`, false);
        if (last.permanent) throw last;
      }
    }
    throw last ?? new MediaFetchError('the download failed', false);
  }

  /** Sizes of everything kept: files (not their notes), bytes. */
  usage(): { files: number; bytes: number } {
    let files = 0;
    let bytes = 0;
    for (const session of listDir(this.root)) {
      for (const name of listDir(join(this.root, session))) {
        if (/^[0-9a-f]{16}\.json$/.test(name)) {
          files += 1;
          try {
            bytes += metaSchema.parse(JSON.parse(readFileSync(join(this.root, session, name), 'utf8'))).size;
          } catch {
            // A note that cannot be read counts as nothing.
          }
        }
      }
    }
    return { files, bytes };
  }

  /**
   * Removes every file fetched before `cutoff` (ms) and unfinished downloads
   * older than it; returns how many files went. A removed file leaves
   * `<id>.expired` (empty) and its transcript, if any: its reference stays in
   * the transcript, and the window says "expired".
   */
  removeOlderThan(cutoff: number): number {
    let removed = 0;
    for (const session of listDir(this.root)) {
      const dir = join(this.root, session);
      for (const name of listDir(dir)) {
        const match = /^([0-9a-f]{16})\.json$/.exec(name);
        const path = join(dir, name);
        if (match) {
          let fetchedAt: number;
          try {
            fetchedAt = metaSchema.parse(JSON.parse(readFileSync(path, 'utf8'))).fetchedAt;
          } catch {
            fetchedAt = modified(path);
          }
          if (fetchedAt >= cutoff) continue;
          const id = match[1]!;
          writeFileSync(join(dir, `${id}.expired`), '', { mode: 0o600 });
          for (const other of listDir(dir)) {
            if (other.startsWith(`${id}.`) && other !== `${id}.expired` && other !== `${id}.transcript.txt`) rmSync(join(dir, other), { force: true });
          }
          removed += 1;
        } else if (name.endsWith('.part') && modified(path) < cutoff) {
          rmSync(path, { force: true });
        }
      }
    }
    return removed;
  }

  private ensureDir(sessionId: string): string {
    const dir = this.dirOf(sessionId);
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    return dir;
  }

  private async download(sessionId: string, ref: MediaRef, open: MediaOpener, options: FetchOptions): Promise<FetchedMedia> {
    const { maxBytes, signal } = options;
    const body = await open({ kind: ref.kind, source: ref.source, mime: ref.mime, name: ref.name }, { signal, maxBytes });
    if (body.size !== undefined && body.size > maxBytes) {
      await closeStream(body.stream);
      throw tooLarge(body.size, maxBytes);
    }
    const dir = this.ensureDir(sessionId);
    const part = resolveInside(dir, ref.id, '.part');
    const file = await open_(part);
    let size = 0;
    let head = Buffer.alloc(0);
    try {
      await file.chmod(0o600);
      for await (const chunk of body.stream) {
        if (signal.aborted) throw new MediaFetchError('the fetch was stopped', false);
        size += chunk.byteLength;
        if (size > maxBytes) throw tooLarge(size, maxBytes);
        if (head.length < 64) head = Buffer.concat([head, Buffer.from(chunk.subarray(0, 64))]);
        await file.write(chunk);
      }
      if (body.size !== undefined && size < body.size) throw new MediaFetchError(`the download ended early (${size} of ${body.size} bytes)`, false);
      await file.sync();
    } catch (error) {
      await file.close().catch(() => undefined);
      rmSync(part, { force: true });
      await closeStream(body.stream);
      throw error;
    }
    await file.close();
    // The type is the bytes' own where they say (an image, a PDF, audio), else what the platform declared.
    const mime = sniffMime(head) ?? safeDeclared(ref.mime ?? body.mime);
    const path = resolveInside(dir, ref.id, extensionOf(mime));
    renameSync(part, path);
    syncDir(dir);
    const meta: MediaMeta = { mime, size, fetchedAt: this.clock.now() };
    writePrivateFile(resolveInside(dir, ref.id, '.json'), JSON.stringify(meta));
    rmSync(resolveInside(dir, ref.id, '.failed'), { force: true });
    return { ...meta, path };
  }
}

/** A declared type that is not one the bytes confirmed: kept only as a generic kind (never shown as an image or HTML). */
function safeDeclared(mime: string | undefined): string {
  const bare = mime?.split(';')[0]?.trim().toLowerCase();
  if (!bare || !/^[\w.+-]+\/[\w.+-]+$/.test(bare)) return 'application/octet-stream';
  // Only the bytes make an image, audio the agent is sent, or anything a browser would render.
  if (bare.startsWith('image/') || bare.includes('html') || bare.includes('xml') || bare.includes('javascript')) return 'application/octet-stream';
  return bare;
}

function open_(path: string) {
  return open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | NO_FOLLOW, 0o600);
}

async function closeStream(stream: AsyncIterable<Uint8Array>): Promise<void> {
  const cancel = (stream as { cancel?: () => Promise<void> }).cancel;
  if (typeof cancel === 'function') await cancel.call(stream).catch(() => undefined);
  else await (stream as AsyncIterable<Uint8Array> & { return?: () => Promise<unknown> })[Symbol.asyncIterator]().return?.().catch?.(() => undefined);
}

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, constants.O_RDONLY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Not every system syncs a directory (Windows): the rename is still atomic.
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function modified(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
