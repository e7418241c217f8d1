import { z } from 'zod';
import type { ChatType } from '../../session/source';

/**
 * Telegram updates as the adapter sees them: validated (the network is
 * hostile), reduced to what a conversation needs, with media turned into a
 * short text so nothing is silently dropped.
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
const duration = z.number().min(0).max(1e9).optional();
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
  photo: z.array(z.unknown()).optional(),
  voice: z.object({ duration }).optional(),
  audio: z.object({ duration, title: z.string().max(MAX_NAME * 4).optional(), performer: z.string().max(MAX_NAME * 4).optional() }).optional(),
  video: z.object({ duration }).optional(),
  video_note: z.object({ duration }).optional(),
  animation: z.object({}).optional(),
  document: z.object({ file_name: z.string().max(MAX_NAME * 4).optional() }).optional(),
  sticker: z.object({ emoji: z.string().max(64).optional() }).optional(),
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
