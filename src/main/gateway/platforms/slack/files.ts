import { z } from 'zod';
import { MAX_MEDIA_NAME, MAX_MEDIA_PER_MESSAGE, type MediaKind, type MediaOffer } from '../../media/media';

/**
 * A Slack message's `files` as media offers, and a line of text per file.
 * Facts from Slack's file object (api.slack.com/types/file, now
 * docs.slack.dev/reference/objects/file-object):
 * - `id`, `name` ("may be null"), `title`, `mimetype`, `filetype`, `size`
 *   (bytes), `mode` (`hosted`, `external`, `snippet`, `post`);
 * - "Authentication is required to retrieve file URLs": `url_private` and
 *   `url_private_download` (the latter "includes headers to force a browser
 *   download") need `Authorization: Bearer <token>` "bearing at least the
 *   `files:read` scope";
 * - Slack Connect: a file shared from another organisation comes as
 *   `{id, mode: "file_access", file_access: "check_file_info"}` with no URL
 *   (its details need `files.info`, which Homing does not call).
 * Observed, not in that page: a deleted file comes as `mode: "tombstone"`, one
 * past a free workspace's storage limit as `mode: "hidden_by_limit"`, and
 * `file_access` may say `access_denied` or `file_not_found` (zulip/zulip's
 * Slack importer skips all four); a recorded audio clip carries
 * `subtype: "slack_audio"` (a video clip `slack_video`), `duration_ms` and
 * `media_display_type`, its mimetype sometimes `video/mp4` although it is
 * sound (@slack/web-api's File type has these fields; bots built on clips, e.g.
 * OpenClaw's Slack media docs, normalise that type).
 *
 * Each file is read on its own: a malformed one loses its offer (it is named
 * in the text), never the message. A file Homing cannot fetch is described in
 * the text in words instead of offered.
 */

/** Slack's file host for `url_private` (the file object's authentication section; files-pri URLs). */
export const SLACK_FILE_HOSTS = ['files.slack.com'] as const;
/** The longest file URL kept (real ones are ~120 characters; the source's bound is 8192). */
const MAX_URL = 2048;

/** A field whose bad value is dropped instead of losing the file. */
const tolerant = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);
const mimeType = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(?:\s*;.{0,200})?$/)
  .transform((type) => type.split(';')[0]!.trim().toLowerCase());
const word = z.string().max(64);

export const fileSchema = z.object({
  id: z.string().regex(/^F[A-Z0-9]{2,24}$/),
  name: tolerant(z.string().max(MAX_MEDIA_NAME * 4)),
  title: tolerant(z.string().max(MAX_MEDIA_NAME * 4)),
  mimetype: tolerant(mimeType),
  filetype: tolerant(z.string().regex(/^[a-z0-9_+-]{1,32}$/i)),
  subtype: tolerant(word),
  mode: tolerant(word),
  file_access: tolerant(word),
  external_type: tolerant(word),
  size: tolerant(z.number().int().min(0).safe()),
  duration_ms: tolerant(z.number().min(0).max(1e10)),
  url_private: tolerant(z.string().max(MAX_URL)),
  url_private_download: tolerant(z.string().max(MAX_URL)),
});
export type SlackFile = z.output<typeof fileSchema>;

/** `sl:<file id>:<url>`: what a transcript keeps as the offer's `source`. */
export function fileSource(fileId: string, url: string): string {
  return `sl:${fileId}:${url}`;
}

export function parseFileSource(source: string): { readonly fileId: string; readonly url: string } | undefined {
  const match = /^sl:(F[A-Z0-9]{2,24}):(https?:\/\/\S+)$/.exec(source);
  if (!match || match[2]!.length > MAX_URL) return undefined;
  return { fileId: match[1]!, url: match[2]! };
}

/**
 * Whether the bot token may go with a request to this URL: https on Slack's
 * file host, or the origin of the configured API (the token goes there for
 * every Web API call anyway; a fake Slack in tests serves its files there).
 * Never to another host, whatever a message or a redirect names.
 */
export function tokenUrlAllowed(url: string, apiUrl: string): boolean {
  const parsed = parseUrl(url);
  if (!parsed || parsed.username !== '' || parsed.password !== '') return false;
  if (parsed.protocol === 'https:' && parsed.port === '' && (SLACK_FILE_HOSTS as readonly string[]).includes(parsed.hostname)) return true;
  return parsed.origin === parseUrl(apiUrl)?.origin;
}

/** What a message's files come to: offers for the fetchable ones, a line of text for each. */
export interface MessageFiles {
  readonly offers: MediaOffer[];
  readonly lines: string[];
}

/** Most file objects a message is read for (Slack allows 10 per message; more is not Slack's). */
export const MAX_FILES_READ = 50;

export function messageFiles(raw: readonly unknown[], apiUrl: string): MessageFiles {
  const offers: MediaOffer[] = [];
  const lines: string[] = [];
  for (const item of raw.slice(0, MAX_FILES_READ)) {
    const parsed = fileSchema.safeParse(item);
    if (!parsed.success) {
      const name = typeof item === 'object' && item !== null ? (item as { name?: unknown }).name : undefined;
      const shown = typeof name === 'string' && name.length <= MAX_MEDIA_NAME * 4 ? cleanName(name) : undefined;
      lines.push(`[attachment${shown !== undefined ? `: ${shown}` : ''} — not available to Homing: Slack described it in a form Homing cannot read]`);
      continue;
    }
    const file = parsed.data;
    const name = cleanName(file.name ?? file.title);
    const label = `attachment${name !== undefined ? `: ${name}` : ''}`;
    const unavailable = whyUnavailable(file, apiUrl);
    if (unavailable !== undefined) {
      lines.push(`[${label} — not available to Homing: ${unavailable}]`);
      continue;
    }
    if (offers.length >= MAX_MEDIA_PER_MESSAGE) {
      lines.push(`[${label} — not fetched: a message brings at most ${MAX_MEDIA_PER_MESSAGE} files]`);
      continue;
    }
    lines.push(`[${label}]`);
    offers.push(offerOf(file, name, apiUrl));
  }
  return { offers, lines };
}

/** Why a file cannot be fetched, in words; undefined when it can. */
function whyUnavailable(file: SlackFile, apiUrl: string): string | undefined {
  if (file.file_access === 'check_file_info') return 'shared from another organisation (Slack Connect)';
  if (file.file_access === 'access_denied') return 'the bot may not see it';
  if (file.file_access === 'file_not_found' || file.mode === 'tombstone') return 'deleted';
  if (file.mode === 'hidden_by_limit') return "hidden by the workspace's file storage limit";
  if (file.mode === 'external') return `stored outside Slack${file.external_type ? ` (${file.external_type})` : ''}`;
  if (file.url_private_download === undefined && file.url_private === undefined) return 'Slack gave no link to it';
  if (fileUrl(file, apiUrl) === undefined) return 'its link is not on Slack';
  return undefined;
}

/** The link the file is fetched by: url_private_download (served as a download), else url_private; only one the token may go to. */
function fileUrl(file: SlackFile, apiUrl: string): string | undefined {
  return [file.url_private_download, file.url_private].find((url) => url !== undefined && tokenUrlAllowed(url, apiUrl));
}

function offerOf(file: SlackFile, name: string | undefined, apiUrl: string): MediaOffer {
  const download = fileUrl(file, apiUrl)!;
  const clip = file.subtype === 'slack_audio' ? 'voice' : file.subtype === 'slack_video' ? 'video' : undefined;
  const kind: MediaKind = clip ?? kindOf(file.mimetype, file.filetype, name);
  // An audio clip declared as video/mp4 or video/webm is sound: its type says so (the bytes decide later anyway).
  const mime = kind === 'voice' && file.mimetype?.startsWith('video/') ? file.mimetype.replace(/^video\//, 'audio/') : file.mimetype;
  return {
    kind,
    source: fileSource(file.id, download),
    ...(mime !== undefined ? { mime } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(file.size !== undefined ? { size: file.size } : {}),
    ...(file.duration_ms !== undefined && (kind === 'voice' || kind === 'audio' || kind === 'video') ? { durationS: file.duration_ms / 1000 } : {}),
  };
}

/** Image types shown as images (others, SVG among them, stay documents: the bytes decide later anyway). */
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/** Slack's `filetype` values (the file object's "File types" table) and extensions, for a file without a mimetype. */
const TYPE_KINDS: Readonly<Record<string, MediaKind>> = {
  jpg: 'image',
  jpeg: 'image',
  png: 'image',
  gif: 'image',
  webp: 'image',
  m4a: 'audio',
  mp3: 'audio',
  ogg: 'audio',
  wav: 'audio',
  flac: 'audio',
  mp4: 'video',
  mov: 'video',
  mkv: 'video',
  webm: 'video',
  mpg: 'video',
  ogv: 'video',
};

function kindOf(mime: string | undefined, filetype: string | undefined, name: string | undefined): MediaKind {
  if (mime !== undefined && mime !== 'application/octet-stream') {
    if (IMAGE_TYPES.has(mime)) return 'image';
    if (mime.startsWith('audio/')) return 'audio';
    if (mime.startsWith('video/')) return 'video';
    return 'document';
  }
  const type = (filetype ?? /\.([A-Za-z0-9]{1,5})$/.exec(name ?? '')?.[1])?.toLowerCase();
  return (type !== undefined ? TYPE_KINDS[type] : undefined) ?? 'document';
}

/** A file name to show: no control, bracket or direction-changing characters (a name cannot close its `[attachment: …]`), at most MAX_MEDIA_NAME code points. */
function cleanName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const clean = [...name.replace(/[\p{Cc}\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/gu, ' ').replace(/\[/g, '(').replace(/\]/g, ')').trim()].slice(0, MAX_MEDIA_NAME).join('');
  return clean === '' ? undefined : clean;
}

function parseUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}
