import { z } from 'zod';
import { MAX_MEDIA_NAME, MAX_MEDIA_PER_MESSAGE, mediaName, type MediaKind, type MediaOffer } from '../../media/media';

/**
 * A Discord message's attachments as media offers. Facts from discord-api-docs
 * (discord/discord-api-docs at c98d64b, `developers/`):
 * - resources/message.mdx, Attachment Object: `id`, `filename`, `title?` (the
 *   original name with special characters), `content_type?`, `size`, `url`,
 *   `proxy_url`, `duration_secs?` ("the duration of the audio or video file");
 * - resources/message.mdx, Message Flags: IS_VOICE_MESSAGE `1 << 13`; Voice
 *   Messages: "Only a single audio attachment is allowed", its Content-Type
 *   "must begin with `audio/`";
 * - reference.mdx, Signed Attachment CDN URLs: attachment URLs are signed with
 *   an expiry (`ex`, hex seconds), and a message fetched again carries valid
 *   ones (which is how DiscordAdapter.openMedia renews an expired link).
 *
 * The offer's `source` names the message and the attachment beside the URL,
 * so an expired link can be renewed; the URL is kept only if it is one Homing
 * would fetch (mediaUrlAllowed).
 */

/** resources/message.mdx, Message Flags. */
export const IS_VOICE_MESSAGE = 1 << 13;
/** The longest attachment URL kept (real ones are ~250 characters; the source's bound is 8192). */
const MAX_URL = 2048;

const snowflake = z.string().regex(/^\d{1,20}$/);
/** A field whose bad value is dropped instead of losing the attachment. */
const tolerant = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);
const mimeType = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(?:\s*;.{0,200})?$/)
  // `audio/ogg; codecs=opus` is what Discord sends for a voice message's parameters: the bare type is kept.
  .transform((type) => type.split(';')[0]!.trim().toLowerCase());

export const attachmentSchema = z.object({
  id: snowflake,
  url: z.string().max(MAX_URL),
  filename: tolerant(z.string().max(MAX_MEDIA_NAME * 4)),
  title: tolerant(z.string().max(MAX_MEDIA_NAME * 4)),
  content_type: tolerant(mimeType),
  size: tolerant(z.number().int().min(0).safe()),
  duration_secs: tolerant(z.number().min(0).max(1e7)),
});
export type DiscordAttachment = z.output<typeof attachmentSchema>;

/** Where an offered file lives: its message (to renew the link) and the link itself. */
export interface AttachmentSource {
  readonly channelId: string;
  readonly messageId: string;
  readonly attachmentId: string;
  readonly url: string;
}

/** `dc:<channel>:<message>:<attachment>:<url>`: what a transcript keeps as the offer's `source`. */
export function attachmentSource(source: AttachmentSource): string {
  return `dc:${source.channelId}:${source.messageId}:${source.attachmentId}:${source.url}`;
}

export function parseAttachmentSource(source: string): AttachmentSource | undefined {
  const match = /^dc:(\d{1,20}):(\d{1,20}):(\d{1,20}):(https?:\/\/\S+)$/.exec(source);
  if (!match || match[4]!.length > MAX_URL) return undefined;
  return { channelId: match[1]!, messageId: match[2]!, attachmentId: match[3]!, url: match[4]! };
}

/** Discord's CDN hosts for attachments (reference.mdx, the example URL; `proxy_url` is on media.discordapp.net). */
export const DISCORD_CDN_HOSTS = ['cdn.discordapp.com', 'media.discordapp.net'] as const;

/**
 * Whether Homing fetches this URL: https on Discord's CDN hosts, or on the
 * origin of the configured API (`apiUrl`: a fake Discord in tests serves its
 * files there). Never another host a message names: the download sends no
 * credentials, but it must not make Homing a client of arbitrary servers.
 */
export function mediaUrlAllowed(url: string, apiUrl: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.username !== '' || parsed.password !== '') return false;
  if (parsed.protocol === 'https:' && (DISCORD_CDN_HOSTS as readonly string[]).includes(parsed.hostname) && parsed.port === '') return true;
  try {
    return parsed.origin === new URL(apiUrl).origin;
  } catch {
    return false;
  }
}

/** When a signed link expires (ms), from its `ex` (hex seconds); undefined when it says nothing readable. */
export function linkExpiry(url: string): number | undefined {
  try {
    const ex = new URL(url).searchParams.get('ex');
    return ex !== null && /^[0-9a-f]{1,12}$/i.test(ex) ? parseInt(ex, 16) * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The offers of a message's attachments (at most MAX_MEDIA_PER_MESSAGE): each
 * one read on its own, so a malformed attachment loses its offer, never the
 * message. A voice message's audio is a `voice` note.
 */
export function attachmentOffers(raw: readonly unknown[], where: { channelId: string; messageId: string; flags: number }, apiUrl: string): MediaOffer[] {
  const offers: MediaOffer[] = [];
  const voice = (where.flags & IS_VOICE_MESSAGE) !== 0;
  for (const item of raw) {
    if (offers.length >= MAX_MEDIA_PER_MESSAGE) break;
    const parsed = attachmentSchema.safeParse(item);
    if (!parsed.success || !mediaUrlAllowed(parsed.data.url, apiUrl)) continue;
    const file = parsed.data;
    const kind: MediaKind = voice && file.content_type?.startsWith('audio/') ? 'voice' : kindOf(file.content_type, file.filename);
    const name = mediaName(file.title ?? file.filename);
    offers.push({
      kind,
      source: attachmentSource({ channelId: where.channelId, messageId: where.messageId, attachmentId: file.id, url: file.url }),
      ...(file.content_type !== undefined ? { mime: file.content_type } : {}),
      ...(name !== undefined ? { name } : {}),
      ...(file.size !== undefined ? { size: file.size } : {}),
      ...(file.duration_secs !== undefined && kind !== 'image' && kind !== 'document' ? { durationS: file.duration_secs } : {}),
    });
  }
  return offers;
}

/** Image types shown as images (others, SVG among them, stay documents: the bytes decide later anyway). */
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const EXTENSION_KINDS: Readonly<Record<string, MediaKind>> = { jpg: 'image', jpeg: 'image', png: 'image', gif: 'image', webp: 'image', ogg: 'audio', mp3: 'audio', m4a: 'audio', wav: 'audio', flac: 'audio', mp4: 'video', webm: 'video', mov: 'video' };

function kindOf(mime: string | undefined, filename: string | undefined): MediaKind {
  if (mime !== undefined) {
    if (IMAGE_TYPES.has(mime)) return 'image';
    if (mime.startsWith('audio/')) return 'audio';
    if (mime.startsWith('video/')) return 'video';
    return 'document';
  }
  const extension = /\.([A-Za-z0-9]{1,5})$/.exec(filename ?? '')?.[1]?.toLowerCase();
  return (extension !== undefined ? EXTENSION_KINDS[extension] : undefined) ?? 'document';
}

