import { z } from 'zod';
import type { MediaOffer } from '../../media/media';
import { MAX_FILES_READ, messageFiles } from './files';

/**
 * Slack's `message` event (and a message in a `conversations.history` /
 * `conversations.replies` page, which has the same shape without `channel`)
 * as the adapter sees it: validated (the network is hostile), reduced to what a
 * conversation needs. Facts: docs.slack.dev, reference/events/message and its
 * subtypes; ids as in test/fixtures/slack-api.md. Its files (a `file_share`
 * message, a recorded clip) become media offers, each read on its own
 * (files.ts): a malformed file, or too many, never lose the message.
 */

/** Slack keeps at most 40 000 characters of a message's text; beyond this a message is cut, not trusted. */
const MAX_TEXT = 40_000;

export const SLACK_TS = /^\d{1,12}\.\d{6}$/;
const ts = z.string().regex(SLACK_TS);
const userId = z.string().regex(/^[UWB][A-Z0-9]{2,20}$/);
const channelId = z.string().regex(/^[CGD][A-Z0-9]{2,20}$/);

const messageSchema = z.object({
  type: z.literal('message'),
  subtype: z.string().max(64).optional(),
  channel: channelId.optional(),
  channel_type: z.string().max(16).optional(),
  user: userId.optional(),
  bot_id: z.string().max(32).optional(),
  text: z.string().max(MAX_TEXT * 4).default(''),
  ts,
  thread_ts: ts.optional(),
  files: z
    .unknown()
    .transform((files) => (Array.isArray(files) ? (files as unknown[]).slice(0, MAX_FILES_READ) : []))
    .optional(),
  // A profile Homing cannot read loses the sender's name, not the message.
  user_profile: z
    .object({ display_name: z.string().max(256).optional(), real_name: z.string().max(256).optional() })
    .optional()
    .catch(undefined),
});

/** Plain messages, files with text, and thread replies also sent to the channel; edits, deletions, joins and the like are not for the agent. */
const CONVERSATION_SUBTYPES = new Set([undefined, 'file_share', 'thread_broadcast']);

export interface IncomingSlackMessage {
  readonly channel: string;
  readonly ts: string;
  /** The thread's root when the message is in a thread (a reply, not the root itself). */
  readonly threadTs: string | undefined;
  readonly senderId: string;
  readonly senderName: string | undefined;
  /** A bot (itself included) or an app: never answered. */
  readonly fromBot: boolean;
  /** A direct message (`D…`). */
  readonly direct: boolean;
  /** The text for the agent: Slack's escapes undone, the leading mention of the bot removed. */
  readonly text: string;
  /** Mentions the bot (`<@U…>`). */
  readonly mentionsBot: boolean;
  /** The files it carries that Homing can fetch, as offers (empty for none; the others are described in `text`). */
  readonly media: readonly MediaOffer[];
}

export type ParsedSlackMessage =
  | { readonly kind: 'message'; readonly message: IncomingSlackMessage }
  | { readonly kind: 'ignore'; readonly reason: string; readonly ts?: string; readonly threadTs?: string };

/**
 * One message; `channel` is where it was read from when the payload has none
 * (history pages); `apiUrl` the configured Web API, whose origin may serve
 * files (the fake Slack in tests).
 */
export function parseSlackMessage(raw: unknown, botUserId: string, channel?: string, apiUrl = 'https://slack.com/api/'): ParsedSlackMessage {
  const parsed = messageSchema.safeParse(raw);
  if (!parsed.success) return { kind: 'ignore', reason: 'not a message Homing can read' };
  const m = parsed.data;
  const where = { ts: m.ts, ...(m.thread_ts && m.thread_ts !== m.ts ? { threadTs: m.thread_ts } : {}) };
  const inChannel = channel ?? m.channel;
  if (!inChannel) return { kind: 'ignore', reason: 'a message without a channel', ...where };
  if (!CONVERSATION_SUBTYPES.has(m.subtype)) return { kind: 'ignore', reason: `a ${m.subtype} message`, ...where };
  if (!m.user) return { kind: 'ignore', reason: 'a message without an author', ...where };
  const files = messageFiles(m.files ?? [], apiUrl);
  const cut = m.text.length > MAX_TEXT ? `${m.text.slice(0, MAX_TEXT)} […]` : m.text;
  const text = [fromSlackText(cut), ...files.lines].filter((part) => part.trim() !== '').join('\n');
  if (text === '') return { kind: 'ignore', reason: 'an empty message', ...where };
  const mention = new RegExp(`<@${botUserId}(?:\\|[^>]*)?>`);
  const stripped = text.replace(new RegExp(`^\\s*<@${botUserId}(?:\\|[^>]*)?>[\\s,:]*`), '');
  const name = m.user_profile?.display_name || m.user_profile?.real_name || undefined;
  return {
    kind: 'message',
    message: {
      channel: inChannel,
      ts: m.ts,
      threadTs: where.threadTs,
      senderId: m.user,
      senderName: name,
      fromBot: m.bot_id !== undefined || m.user === botUserId || m.subtype === 'bot_message',
      direct: inChannel.startsWith('D'),
      text: stripped.trim() === '' ? text : stripped,
      mentionsBot: mention.test(m.text),
      media: files.offers,
    },
  };
}

/**
 * Slack's message text as a person wrote it: links `<url|label>` as
 * "label (url)", `<url>` as the url, and `&lt;` `&gt;` `&amp;` undone (last,
 * so an escaped `&lt;` never becomes a link). Mentions (`<@U…>`) and channel
 * links (`<#C…|name>`) stay as they are, channels by name.
 */
export function fromSlackText(text: string): string {
  return text
    .replace(/<#([CG][A-Z0-9]+)\|([^>]*)>/g, (_all, _id: string, name: string) => `#${name}`)
    .replace(/<((?:https?|mailto):[^|>]+)\|([^>]*)>/g, (_all, url: string, label: string) => (label === url ? url : `${label} (${url})`))
    .replace(/<((?:https?|mailto):[^>]+)>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
