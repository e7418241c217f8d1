import { z } from 'zod';
import type { MediaOffer } from '../../media/media';
import { attachmentOffers } from './attachments';

/**
 * Discord's MESSAGE_CREATE as the adapter sees it: validated (the network is
 * hostile), reduced to what a conversation needs, with attachments turned into
 * a short text so nothing is silently dropped, and into offers of their files
 * (attachments.ts; fetched later, DiscordAdapter.openMedia). Which conversation it belongs
 * to (a thread, its parent channel) is the adapter's business: it knows the
 * channels.
 */

/** Longer than any real message (2000, 4000 with Nitro); beyond it a message is cut, not trusted. */
const MAX_TEXT = 8_192;
const MAX_NAME = 256;

const snowflake = z.string().regex(/^\d{1,20}$/);
const user = z.object({
  id: snowflake,
  username: z.string().max(MAX_NAME).optional(),
  global_name: z.string().max(MAX_NAME * 4).nullable().optional(),
  bot: z.boolean().optional(),
  system: z.boolean().optional(),
});
const messageSchema = z.object({
  id: snowflake,
  channel_id: snowflake,
  guild_id: snowflake.optional(),
  author: user,
  content: z.string().max(MAX_TEXT * 4).default(''),
  type: z.number().int().default(0),
  webhook_id: snowflake.optional(),
  mentions: z.array(user).max(500).default([]),
  // Each attachment is read on its own (attachments.ts): a malformed one loses its offer, not the message.
  attachments: z.array(z.unknown()).max(50).default([]),
  flags: z.number().int().min(0).safe().catch(0),
  message_reference: z.object({ message_id: snowflake.optional(), channel_id: snowflake.optional() }).optional(),
  referenced_message: z.object({ author: user.optional() }).nullable().optional(),
  member: z.object({ nick: z.string().max(MAX_NAME * 4).nullable().optional() }).optional(),
});

/** Default messages and replies; joins, pins, boosts and the like are not for the agent. */
const CONVERSATION_TYPES = new Set([0, 19]);

export interface IncomingDiscordMessage {
  readonly id: string;
  readonly channelId: string;
  readonly guildId: string | undefined;
  readonly senderId: string;
  readonly senderName: string | undefined;
  /** A bot (itself included), a webhook or Discord's system user: never answered. */
  readonly fromBot: boolean;
  /** The text for the agent, without the leading mention of the bot. */
  readonly text: string;
  /** Mentions the bot, or replies to one of its messages. */
  readonly addressed: boolean;
  /** The files it carries, as offers (empty for none). */
  readonly media: readonly MediaOffer[];
}

export type ParsedMessage = { readonly kind: 'message'; readonly message: IncomingDiscordMessage } | { readonly kind: 'ignore'; readonly reason: string; readonly id?: string; readonly channelId?: string };

/** `apiUrl`: the configured API, whose origin may serve files too (a fake Discord in tests). */
export function parseMessageCreate(raw: unknown, botId: string, apiUrl = 'https://discord.com/api'): ParsedMessage {
  const parsed = messageSchema.safeParse(raw);
  if (!parsed.success) return { kind: 'ignore', reason: 'not a message Homing can read' };
  const m = parsed.data;
  const where = { id: m.id, channelId: m.channel_id };
  if (!CONVERSATION_TYPES.has(m.type)) return { kind: 'ignore', reason: 'a system message', ...where };
  const text = messageText(m.content, m.attachments);
  if (text === undefined) return { kind: 'ignore', reason: 'an empty message', ...where };
  const mentionsBot = m.mentions.some((who) => who.id === botId) || new RegExp(`<@!?${botId}>`).test(m.content);
  const repliesToBot = m.referenced_message?.author?.id === botId;
  return {
    kind: 'message',
    message: {
      id: m.id,
      channelId: m.channel_id,
      guildId: m.guild_id,
      senderId: m.author.id,
      senderName: bounded(m.member?.nick ?? m.author.global_name ?? m.author.username),
      fromBot: m.author.bot === true || m.author.system === true || m.webhook_id !== undefined,
      text: stripOwnMention(text, botId),
      addressed: mentionsBot || repliesToBot,
      media: attachmentOffers(m.attachments, { channelId: m.channel_id, messageId: m.id, flags: m.flags }, apiUrl),
    },
  };
}

function messageText(content: string, attachments: readonly unknown[]): string | undefined {
  const cut = content.length > MAX_TEXT ? content.slice(0, MAX_TEXT) + ' […]' : content;
  const files = attachments.map((file) => {
    const name = typeof file === 'object' && file !== null ? (file as { filename?: unknown }).filename : undefined;
    return `[attachment${typeof name === 'string' && name.length <= MAX_NAME * 4 && name !== '' ? `: ${bounded(name)}` : ''}]`;
  });
  const text = [cut, ...files].filter((part) => part.trim() !== '').join('\n');
  return text === '' ? undefined : text;
}

/** "<@123> what time is it" → "what time is it". */
function stripOwnMention(text: string, botId: string): string {
  const stripped = text.replace(new RegExp(`^\\s*<@!?${botId}>[\\s,:]*`), '');
  return stripped.trim() === '' ? text : stripped;
}

function bounded(text: string | null | undefined): string | undefined {
  if (text === undefined || text === null || text === '') return undefined;
  const points = [...text];
  return points.length > MAX_NAME ? points.slice(0, MAX_NAME).join('') : text;
}
