import { z } from 'zod';
import type { ChatType } from '../../session/source';
import { MAX_MEDIA_NAME, mediaName, type MediaKind, type MediaOffer } from '../../media/media';

/**
 * Telegram updates as the adapter sees them: validated (the network is
 * hostile), reduced to what a conversation needs, with media turned into a
 * short text so nothing is silently dropped, and into an offer of its file
 * (fetched later with getFile, TelegramAdapter.openMedia).
 *
 * A media field is read field by field: one that is malformed loses its offer
 * (or the bad detail), never the message, whose description still says what
 * it carried.
 */

/** Longer than any real message (4096) or caption (1024); an update beyond it is cut, not trusted. */
const MAX_TEXT = 16_384;
const MAX_NAME = 256;

const id = z.number().int().safe();
const user = z.object({
  id,
  is_bot: z.boolean().optional(),
  first_name: z.string().max(MAX_NAME * 4).optional(),
  last_name: z.string().max(MAX_NAME * 4).optional(),
  username: z.string().max(MAX_NAME).optional(),
});
const chat = z.object({
  id,
  type: z.enum(['private', 'group', 'supergroup', 'channel']),
  title: z.string().max(MAX_NAME * 4).optional(),
  first_name: z.string().max(MAX_NAME * 4).optional(),
  last_name: z.string().max(MAX_NAME * 4).optional(),
  username: z.string().max(MAX_NAME).optional(),
  is_forum: z.boolean().optional(),
});
const entity = z.object({
  type: z.string().max(64),
  offset: z.number().int().min(0),
  length: z.number().int().min(0),
  user: user.optional(),
});
/** A field whose bad value is dropped instead of failing the whole update. */
const tolerant = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);
const duration = tolerant(z.number().min(0).max(1e9));
/** Bot API file ids are base64url (td's base64url_encode), about 70–100 characters; anything else is not one. */
const fileId = z.string().regex(/^[A-Za-z0-9_-]{1,1024}$/);
const fileSize = z.number().int().min(0).safe();
/** `type/subtype` (RFC 6838 restricted names); a declared type is a claim, checked against the bytes later. */
const mimeType = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/)
  .transform((type) => type.toLowerCase());
const fileName = z.string().max(MAX_MEDIA_NAME * 4);
/** The fields every Bot API file object has (Client::json_store_file: file_id, file_unique_id, file_size when known). */
const file = { file_id: tolerant(fileId), file_size: tolerant(fileSize) };
/** Bot API PhotoSize: file_id, file_unique_id, width, height, file_size? (Client::JsonPhotoSize). */
const photoSize = z.object({ file_id: fileId, width: z.number().int().min(0).max(1e6).catch(0), height: z.number().int().min(0).max(1e6).catch(0), file_size: tolerant(fileSize) });
/** Photo sizes read at most: Telegram sends 1–5 (s, m, x, y, w). */
const MAX_PHOTO_SIZES = 20;
const messageSchema = z.object({
  message_id: id,
  message_thread_id: id.optional(),
  is_topic_message: z.boolean().optional(),
  from: user.optional(),
  chat,
  date: z.number().optional(),
  text: z.string().max(MAX_TEXT * 4).optional(),
  caption: z.string().max(MAX_TEXT * 4).optional(),
  entities: z.array(entity).max(1000).optional(),
  caption_entities: z.array(entity).max(1000).optional(),
  reply_to_message: z.object({ message_id: id, from: user.optional() }).optional(),
  migrate_to_chat_id: id.optional(),
  migrate_from_chat_id: id.optional(),
  // A media field that is not an object still says what the message was (`{}`: described, no offer).
  photo: z.array(z.unknown()).optional().catch([]),
  voice: z.object({ ...file, duration, mime_type: tolerant(mimeType) }).optional().catch({}),
  audio: z
    .object({
      ...file,
      duration,
      mime_type: tolerant(mimeType),
      file_name: tolerant(fileName),
      title: tolerant(z.string().max(MAX_NAME * 4)),
      performer: tolerant(z.string().max(MAX_NAME * 4)),
    })
    .optional()
    .catch({}),
  video: z.object({ ...file, duration, mime_type: tolerant(mimeType), file_name: tolerant(fileName) }).optional().catch({}),
  video_note: z.object({ ...file, duration }).optional().catch({}),
  animation: z.object({ ...file, duration, mime_type: tolerant(mimeType), file_name: tolerant(fileName) }).optional().catch({}),
  document: z.object({ ...file, mime_type: tolerant(mimeType), file_name: tolerant(fileName) }).optional().catch({}),
  sticker: z.object({ emoji: tolerant(z.string().max(64)) }).optional().catch({}),
  location: z.object({ latitude: z.number(), longitude: z.number() }).optional(),
  contact: z.object({ first_name: z.string().max(MAX_NAME * 4).optional() }).optional(),
  poll: z.object({ question: z.string().max(MAX_TEXT).optional() }).optional(),
});
const updateSchema = z.object({ update_id: id, message: messageSchema.optional() });

export type TelegramMessage = z.output<typeof messageSchema>;

/** What one update means for Homing. */
export type ParsedUpdate =
  | { readonly kind: 'ignore'; readonly updateId: number | undefined; readonly reason: string }
  /** A group became a supergroup: the conversation moves with it. */
  | { readonly kind: 'migrated'; readonly updateId: number; readonly from: string; readonly to: string }
  | { readonly kind: 'message'; readonly updateId: number; readonly message: IncomingTelegramMessage };

export interface IncomingTelegramMessage {
  readonly chatId: string;
  readonly chatType: ChatType;
  /** The forum topic, only in forums, never the General topic. */
  readonly threadId: string | undefined;
  readonly messageId: string;
  readonly senderId: string | undefined;
  readonly senderName: string | undefined;
  readonly senderIsBot: boolean;
  readonly chatName: string | undefined;
  /** The text for the agent: the message's own, or a short description of its media. */
  readonly text: string;
  /** Mentioned, replied to, or a command addressed to this bot (only meaningful in groups). */
  readonly addressed: boolean;
  /** The file the message carries (a Telegram message carries one at most), as an offer: empty for text and unreadable media. */
  readonly media: readonly MediaOffer[];
}

export interface BotIdentity {
  readonly id: number;
  readonly username: string;
}

export function parseUpdate(raw: unknown, bot: BotIdentity): ParsedUpdate {
  const rawId = typeof raw === 'object' && raw !== null ? (raw as { update_id?: unknown }).update_id : undefined;
  const fallbackId = typeof rawId === 'number' && Number.isSafeInteger(rawId) ? rawId : undefined;
  const parsed = updateSchema.safeParse(raw);
  if (!parsed.success) return { kind: 'ignore', updateId: fallbackId, reason: 'not an update Homing can read' };
  const { update_id: updateId, message } = parsed.data;
  if (!message) return { kind: 'ignore', updateId, reason: 'not a message' };
  if (message.migrate_to_chat_id !== undefined) {
    return { kind: 'migrated', updateId, from: String(message.chat.id), to: String(message.migrate_to_chat_id) };
  }
  if (message.migrate_from_chat_id !== undefined) {
    return { kind: 'migrated', updateId, from: String(message.migrate_from_chat_id), to: String(message.chat.id) };
  }
  if (message.chat.type === 'channel') return { kind: 'ignore', updateId, reason: 'a channel post' };
  const text = messageText(message);
  if (text === undefined) return { kind: 'ignore', updateId, reason: 'a service message' };
  const isForum = message.chat.is_forum === true;
  const thread = isForum && message.is_topic_message && message.message_thread_id !== undefined ? message.message_thread_id : undefined;
  return {
    kind: 'message',
    updateId,
    message: {
      chatId: String(message.chat.id),
      chatType: message.chat.type === 'private' ? 'direct' : 'group',
      // Topic 1 is General: the chat's own conversation.
      threadId: thread === undefined || thread === 1 ? undefined : String(thread),
      messageId: String(message.message_id),
      senderId: message.from ? String(message.from.id) : undefined,
      senderName: message.from ? displayName(message.from) : undefined,
      senderIsBot: message.from?.is_bot === true,
      chatName: message.chat.type === 'private' ? displayName(message.chat) : bounded(message.chat.title),
      text: stripOwnMention(text, bot),
      addressed: isAddressed(message, bot),
      media: mediaOffers(message),
    },
  };
}

function displayName(who: { first_name?: string | undefined; last_name?: string | undefined; username?: string | undefined }): string | undefined {
  const name = [who.first_name, who.last_name].filter((part) => part && part.trim() !== '').join(' ');
  return bounded(name || (who.username ? `@${who.username}` : undefined));
}

function bounded(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const points = [...text];
  return points.length > MAX_NAME ? points.slice(0, MAX_NAME).join('') : text;
}

function cut(text: string): string {
  return text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) + ' […]' : text;
}

/** The text, or media as a short description (with the caption), or undefined for service messages. */
export function messageText(message: TelegramMessage): string | undefined {
  if (message.text !== undefined) return cut(message.text);
  const caption = message.caption ? `: ${cut(message.caption)}` : '';
  const seconds = (value: number | undefined) => (value === undefined ? '' : `, ${formatDuration(value)}`);
  if (message.photo) return `[photo${caption}]`;
  if (message.voice) return `[voice note${seconds(message.voice.duration)}]${caption ? ` ${caption.slice(2)}` : ''}`;
  if (message.video_note) return `[video message${seconds(message.video_note.duration)}]`;
  if (message.video) return `[video${seconds(message.video.duration)}${caption}]`;
  if (message.animation) return `[animation${caption}]`;
  if (message.audio) {
    const title = [message.audio.performer, message.audio.title].filter(Boolean).join(' — ');
    return `[audio${title ? `: ${bounded(title)}` : ''}${seconds(message.audio.duration)}${caption}]`;
  }
  if (message.document) return `[document${message.document.file_name ? `: ${bounded(message.document.file_name)}` : ''}${caption}]`;
  if (message.sticker) return `[sticker${message.sticker.emoji ? ` ${message.sticker.emoji}` : ''}]`;
  if (message.location) return `[location ${message.location.latitude.toFixed(5)}, ${message.location.longitude.toFixed(5)}]`;
  if (message.contact) return `[contact${message.contact.first_name ? `: ${bounded(message.contact.first_name)}` : ''}]`;
  if (message.poll) return `[poll${message.poll.question ? `: ${cut(message.poll.question)}` : ''}]`;
  return undefined;
}

/**
 * The offer of the message's file, in the order messageText describes media
 * (a text message offers none). An animation comes with a `document` copy
 * (Bot API docs, Message.animation: "for backward compatibility, when this
 * field is set, the document field will also be set"): one offer, the animation.
 */
export function mediaOffers(message: TelegramMessage): MediaOffer[] {
  if (message.text !== undefined) return [];
  const offer = mediaOffer(message);
  return offer ? [offer] : [];
}

/** Image types a document is taken as an image for (Telegram sends a photo "as a file" this way, uncompressed). */
const IMAGE_DOCUMENT_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif']);

function mediaOffer(message: TelegramMessage): MediaOffer | undefined {
  if (message.photo) return largestPhoto(message.photo);
  if (message.voice) {
    const { file_id, file_size, mime_type, duration } = message.voice;
    // Telegram apps record voice notes as Opus in OGG (Bot API docs, Voice; sendVoice takes .OGG/Opus first); a claim, checked against the bytes.
    return offer('voice', file_id, { mime: mime_type ?? 'audio/ogg', size: file_size, durationS: duration });
  }
  if (message.video_note) {
    const { file_id, file_size, duration } = message.video_note;
    // Bot API VideoNote has no mime_type: video messages are MP4 (Bot API docs, sendVideoNote).
    return offer('video', file_id, { mime: 'video/mp4', size: file_size, durationS: duration });
  }
  const video = message.video ?? message.animation;
  if (video) return offer('video', video.file_id, { mime: video.mime_type, name: video.file_name, size: video.file_size, durationS: video.duration });
  if (message.audio) {
    const { file_id, file_size, mime_type, file_name, performer, title, duration } = message.audio;
    const name = file_name ?? ([performer, title].filter((part) => part && part.trim() !== '').join(' — ') || undefined);
    return offer('audio', file_id, { mime: mime_type, name, size: file_size, durationS: duration });
  }
  if (message.document) {
    const { file_id, file_size, mime_type, file_name } = message.document;
    const kind = mime_type !== undefined && IMAGE_DOCUMENT_TYPES.has(mime_type) ? 'image' : 'document';
    return offer(kind, file_id, { mime: mime_type, name: file_name, size: file_size });
  }
  return undefined;
}

/** A photo comes in several sizes (PhotoSize, smallest first as Telegram sends them, not trusted): the one with the most pixels. */
function largestPhoto(sizes: readonly unknown[]): MediaOffer | undefined {
  let best: z.output<typeof photoSize> | undefined;
  for (const raw of sizes.slice(0, MAX_PHOTO_SIZES)) {
    const parsed = photoSize.safeParse(raw);
    if (!parsed.success) continue;
    const size = parsed.data;
    const pixels = size.width * size.height;
    const bestPixels = best ? best.width * best.height : -1;
    if (!best || pixels > bestPixels || (pixels === bestPixels && (size.file_size ?? 0) > (best.file_size ?? 0))) best = size;
  }
  // Telegram re-encodes a photo as JPEG (a picture sent uncompressed arrives as a document).
  return best && offer('image', best.file_id, { mime: 'image/jpeg', size: best.file_size });
}

/** The offer of a file with a usable id (none without one), without the details the platform did not give. */
function offer(kind: MediaKind, source: string | undefined, details: Omit<MediaOffer, 'kind' | 'source'>): MediaOffer | undefined {
  if (source === undefined) return undefined;
  const name = mediaName(details.name);
  return {
    kind,
    source,
    ...(details.mime !== undefined ? { mime: details.mime } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(details.size !== undefined ? { size: details.size } : {}),
    ...(details.durationS !== undefined ? { durationS: details.durationS } : {}),
  };
}

function formatDuration(total: number): string {
  const s = Math.round(total);
  if (s < 60) return `${s} s`;
  const minutes = Math.floor(s / 60);
  return s % 60 === 0 ? `${minutes} min` : `${minutes} min ${s % 60} s`;
}

/** Mentioned by @username or by a text mention, replied to, or sent a command (`/x`, `/x@thisbot`). */
function isAddressed(message: TelegramMessage, bot: BotIdentity): boolean {
  if (message.reply_to_message?.from?.id === bot.id) return true;
  const text = message.text ?? message.caption ?? '';
  const entities = message.entities ?? message.caption_entities ?? [];
  const own = `@${bot.username}`.toLowerCase();
  for (const item of entities) {
    const span = text.slice(item.offset, item.offset + item.length);
    if (item.type === 'mention' && span.toLowerCase() === own) return true;
    if (item.type === 'text_mention' && item.user?.id === bot.id) return true;
    if (item.type === 'bot_command' && item.offset === 0) {
      const at = span.indexOf('@');
      if (at < 0 || span.slice(at).toLowerCase() === own) return true;
    }
  }
  return false;
}

/** "@homing_bot what time is it" → "what time is it"; "/new@homing_bot" → "/new". */
function stripOwnMention(text: string, bot: BotIdentity): string {
  const escaped = bot.username.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const stripped = text
    .replace(new RegExp(`^@${escaped}\\b[\\s,:]*`, 'i'), '')
    .replace(new RegExp(`^(/[A-Za-z0-9_]+)@${escaped}\\b`, 'i'), '$1');
  return stripped.trim() === '' ? text : stripped;
}
