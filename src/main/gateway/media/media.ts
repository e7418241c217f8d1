import { z } from 'zod';

/**
 * Media a message carries (a photo, a voice note, a file): what a platform
 * offers at intake, and how the bytes are fetched afterwards.
 *
 * A message is saved with *references* to its media (the transcript line
 * carries them, never bytes); the files are fetched into the data directory
 * (`media/<session id>/<media id>.<ext>`, media-store.ts) before the message's
 * turn starts, and what the agent is shown of them is worked out then
 * (media-for-agent.ts). Nothing here trusts the platform: every size, name and
 * type is bounded, and a file is checked against the limits both by its
 * declared size and while it streams.
 */

export const MEDIA_KINDS = ['image', 'voice', 'audio', 'video', 'document'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

/** Longest file name kept from a platform (shown, never used as a path). */
export const MAX_MEDIA_NAME = 200;
/** Most media one message may carry; beyond it the rest are described, not fetched. */
export const MAX_MEDIA_PER_MESSAGE = 10;

/**
 * What an adapter offers at intake: how to fetch one file later (`source`: the
 * platform's locator — Telegram's `file_id`, a Matrix `mxc://` URI, a URL, an
 * email's part number) and what the platform says about it (claims, checked
 * again when the bytes arrive).
 */
export interface MediaOffer {
  readonly kind: MediaKind;
  readonly source: string;
  /** The MIME type the platform declares (`image/jpeg`); checked against the bytes. */
  readonly mime?: string | undefined;
  /** The file's name as the sender gave it (shown to the agent and in the window). */
  readonly name?: string | undefined;
  /** Bytes, as the platform declares them (a file declared over the limit is not fetched). */
  readonly size?: number | undefined;
  /** Seconds, for voice notes, audio and video. */
  readonly durationS?: number | undefined;
}

/** How an adapter's error names a file: `the image`, `the voice message`, `the file`. */
export function theMedia(kind: MediaKind): string {
  switch (kind) {
    case 'image':
      return 'the image';
    case 'voice':
      return 'the voice message';
    case 'audio':
      return 'the audio file';
    case 'video':
      return 'the video';
    case 'document':
      return 'the file';
  }
}

/**
 * A file's name as a sender gave it, fit to show and to save: no control,
 * zero-width or direction-changing characters (they disguise what a name says,
 * `report\u202egpj.exe`), at most MAX_MEDIA_NAME code points; undefined when
 * nothing is left or it is no string.
 */
export function mediaName(name: unknown): string | undefined {
  if (typeof name !== 'string') return undefined;
  const plain = name.slice(0, MAX_MEDIA_NAME * 4).replace(/[\p{Cc}\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/gu, '').trim();
  const clean = [...plain].slice(0, MAX_MEDIA_NAME).join('');
  return clean === '' ? undefined : clean;
}

/** A media reference as saved in a transcript line: the offer, with the id its file is named by. */
export const mediaRefSchema = z.object({
  /** 16 hex digits, random: the file's name in `media/<session id>/` (pseudonymous, never the sender's name). */
  id: z.string().regex(/^[0-9a-f]{16}$/),
  kind: z.enum(MEDIA_KINDS),
  source: z.string().max(8192),
  mime: z.string().max(255).optional(),
  name: z.string().max(MAX_MEDIA_NAME * 4).optional(),
  size: z.number().int().min(0).optional(),
  durationS: z.number().min(0).optional(),
});
export type MediaRef = z.infer<typeof mediaRefSchema>;

/** The bytes of one file as a platform hands them over (MediaOpener). */
export interface MediaBody {
  /** Bytes, when the platform says (Content-Length): a body declared over the limit is refused before it is read. */
  readonly size?: number | undefined;
  /** The type the platform serves it as, when it says. */
  readonly mime?: string | undefined;
  readonly stream: AsyncIterable<Uint8Array>;
}

/**
 * Fetching a file failed. `permanent`: it will never work (deleted, expired,
 * too large, refused) — the agent is told so in words; otherwise the fetch is
 * tried again (a network error, a server error, the platform not connected).
 */
export class MediaFetchError extends Error {
  override readonly name = 'MediaFetchError';
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

/**
 * How an adapter opens a file it offered (PlatformAdapter.openMedia). Throws
 * MediaFetchError (or anything: taken as a temporary failure). `maxBytes` is the
 * limit the caller enforces anyway; an adapter that knows the size first (a
 * Telegram `getFile`) refuses early with a permanent MediaFetchError.
 */
export type MediaOpener = (offer: Pick<MediaOffer, 'kind' | 'source' | 'mime' | 'name'>, options: { readonly signal: AbortSignal; readonly maxBytes: number }) => Promise<MediaBody>;

/** A file handed to the agent with its message (AgentTurn's message `attachments`). */
export interface TurnAttachment {
  readonly kind: MediaKind;
  /** Absolute path of the fetched file, inside the data directory. */
  readonly path: string;
  readonly mime: string;
  readonly name?: string | undefined;
  readonly size: number;
}

/**
 * A body from an HTTP response: refused as `permanent` when the status says the
 * file is gone or forbidden (400, 401, 403, 404, 410) or its declared length is
 * over `maxBytes`; temporary for other failures (429, 5xx). For adapters whose
 * files are URLs (Telegram's file path, Matrix media, Discord attachments).
 */
export function httpMediaBody(response: Response, maxBytes: number, what = 'the file'): MediaBody {
  if (!response.ok) {
    void response.body?.cancel().catch(() => undefined);
    const gone = [400, 401, 403, 404, 410].includes(response.status);
    throw new MediaFetchError(`${what} could not be downloaded (HTTP ${response.status}${gone ? ': deleted, expired or not allowed' : ''})`, gone);
  }
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    void response.body?.cancel().catch(() => undefined);
    throw tooLarge(declared, maxBytes);
  }
  if (!response.body) throw new MediaFetchError(`${what} came with no body`, false);
  const mime = response.headers.get('content-type') ?? undefined;
  return { ...(Number.isFinite(declared) ? { size: declared } : {}), ...(mime ? { mime } : {}), stream: response.body as unknown as AsyncIterable<Uint8Array> };
}

/** A download that failed before any answer, in words with its cause (undici's "fetch failed" says why only there). */
export function downloadErrorWords(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${text}${cause}`.slice(0, 300);
}

/** The permanent refusal of a file over the limit, in words (`50.0 MB; the limit is 20 MB`). */
export function tooLarge(size: number, maxBytes: number): MediaFetchError {
  return new MediaFetchError(`too large (${formatBytes(size)}; the limit is ${formatBytes(maxBytes)})`, true);
}

/** `512 bytes`, `12.3 KB`, `4.5 MB` (decimal units, as platforms state their limits). */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  const [value, unit] = bytes < 1_000_000 ? [bytes / 1000, 'KB'] : [bytes / 1_000_000, 'MB'];
  return `${value.toFixed(1).replace(/\.0$/, '')} ${unit}`;
}
