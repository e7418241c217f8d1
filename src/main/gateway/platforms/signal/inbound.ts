/**
 * What signal-cli hands over, parsed: one `{envelope, account}` object per
 * received message (JsonReceiveMessageHandler; the `receive` method returns a
 * list of them, an automatic-mode notification carries one as `params`, a
 * `subscribeReceive` notification as `params.result`: man
 * signal-cli-jsonrpc(5), "Basic usage"). Fields as signal-cli's records name
 * them: JsonMessageEnvelope (sourceNumber, sourceUuid, sourceName, timestamp,
 * dataMessage), JsonDataMessage (timestamp, message, quote, mentions,
 * groupInfo, attachments), JsonQuote (id, authorNumber, authorUuid), JsonMention
 * (number, uuid, start, length), JsonGroupInfo (groupId, groupName),
 * JsonAttachment (attachments.ts).
 *
 * A message is identified by its author and its timestamp (Signal has no
 * message ids: a quote names the quoted message by both). Only data messages
 * with text or attachments are for the agent; receipts, typing, reactions,
 * calls, stories and sync messages (the account's own phone writing) are
 * passed over. A message with files and no text is described in words
 * (`[photo]`), so it reaches the agent like any other.
 */

import type { MediaOffer } from '../../media/media';
import { attachmentOffers } from './attachments';

export interface SignalIdentity {
  readonly number: string;
  readonly uuid: string | undefined;
}

export interface IncomingSignalMessage {
  /** The author as Homing keys them: the UUID where signal-cli knows it (it survives a number change), else the number. */
  readonly author: string;
  readonly authorNumber: string | undefined;
  readonly authorUuid: string | undefined;
  readonly authorName: string | undefined;
  /** The message's timestamp (ms): with the author, its identity. */
  readonly timestamp: number;
  readonly text: string;
  readonly groupId: string | undefined;
  readonly groupName: string | undefined;
  /** The bot was mentioned, or its message quoted. */
  readonly addressed: boolean;
  /** Its files (attachments.ts), fetched later with `getAttachment`; kept in the inbox journal with the message. */
  readonly media?: readonly MediaOffer[] | undefined;
}

export type ParsedReceive = { readonly kind: 'message'; readonly message: IncomingSignalMessage } | { readonly kind: 'ignore'; readonly why: string };

const OBJECT_REPLACEMENT = '\uFFFC';
const MAX_TEXT = 64 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NUMBER = /^\+[1-9]\d{6,14}$/;
const GROUP_ID = /^[A-Za-z0-9+/]{1,200}={0,2}$/;

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function text(value: unknown, max = 200): string | undefined {
  return typeof value === 'string' && value !== '' ? value.slice(0, max) : undefined;
}

function uuidOf(value: unknown): string | undefined {
  return typeof value === 'string' && UUID.test(value) ? value.toLowerCase() : undefined;
}

function numberOf(value: unknown): string | undefined {
  return typeof value === 'string' && NUMBER.test(value) ? value : undefined;
}

function isSelf(self: SignalIdentity, number: unknown, uuid: unknown): boolean {
  return (self.uuid !== undefined && uuidOf(uuid) === self.uuid) || numberOf(number) === self.number;
}

/** The `{envelope, account}` objects a `receive` answer or notification carries. */
export function receivedItems(method: 'result' | 'notification', payload: unknown): unknown[] {
  if (method === 'result') return Array.isArray(payload) ? payload : [];
  const params = record(payload);
  if (!params) return [];
  // A subscription's notification wraps the object in `result`; the automatic one does not.
  return [params.subscription !== undefined && params.result !== undefined ? params.result : params];
}

export function parseReceived(item: unknown, self: SignalIdentity): ParsedReceive {
  const envelope = record(record(item)?.envelope);
  if (!envelope) return { kind: 'ignore', why: 'no envelope' };
  const data = record(envelope.dataMessage);
  if (!data) return { kind: 'ignore', why: 'not a data message' };
  const authorUuid = uuidOf(envelope.sourceUuid);
  const authorNumber = numberOf(envelope.sourceNumber) ?? numberOf(envelope.source);
  const author = authorUuid ?? authorNumber;
  if (!author) return { kind: 'ignore', why: 'no sender' };
  if (isSelf(self, authorNumber, authorUuid)) return { kind: 'ignore', why: 'from the account itself' };
  const timestamp = typeof envelope.timestamp === 'number' && Number.isSafeInteger(envelope.timestamp) && envelope.timestamp > 0 ? envelope.timestamp : undefined;
  if (timestamp === undefined) return { kind: 'ignore', why: 'no timestamp' };
  const group = record(data.groupInfo);
  const groupId = typeof group?.groupId === 'string' && GROUP_ID.test(group.groupId) ? group.groupId : undefined;
  if (group && !groupId) return { kind: 'ignore', why: 'a group without a readable id' };
  const files = attachmentOffers(data.attachments, chatIdOf({ author, groupId }));
  const body = typeof data.message === 'string' ? data.message.slice(0, MAX_TEXT) : '';
  if (body.trim() === '' && files.labels.length === 0 && files.notes.length === 0) return { kind: 'ignore', why: 'no text' };
  const mentions = Array.isArray(data.mentions) ? data.mentions.map(record).filter((entry) => entry !== undefined) : [];
  const said = withMentions(body, mentions, self);
  // Nothing said (or only the bot's mention): the attachments' captions, else what they are, stand for the text.
  const words = said.trim() !== '' || files.labels.length === 0 ? said : files.captions.length > 0 ? files.captions.join('\n') : files.labels.join(' ');
  // A file Homing cannot fetch is named, so nothing the person sent goes unmentioned.
  const shown = [words, ...files.notes].filter((part) => part.trim() !== '').join('\n');
  const quote = record(data.quote);
  const mentioned = mentions.some((mention) => isSelf(self, mention.number, mention.uuid));
  const quoted = quote !== undefined && isSelf(self, quote.authorNumber ?? quote.author, quote.authorUuid);
  return {
    kind: 'message',
    message: {
      author,
      authorNumber,
      authorUuid,
      authorName: text(envelope.sourceName),
      timestamp,
      text: shown,
      groupId,
      groupName: group ? text(group.groupName) : undefined,
      addressed: mentioned || quoted,
      ...(files.offers.length > 0 ? { media: files.offers } : {}),
    },
  };
}

/**
 * Signal puts U+FFFC where a mention stands in the text (its range names the
 * person): the bot's own mention is taken out, anyone else's becomes `@`.
 */
function withMentions(body: string, mentions: readonly Record<string, unknown>[], self: SignalIdentity): string {
  if (!body.includes(OBJECT_REPLACEMENT)) return body;
  const at = new Map<number, boolean>();
  for (const mention of mentions) if (typeof mention.start === 'number') at.set(mention.start, isSelf(self, mention.number, mention.uuid));
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const char = body[i]!;
    if (char !== OBJECT_REPLACEMENT) out += char;
    else if (at.get(i) === true) continue;
    else out += '@';
  }
  return out.replace(/^\s+/, '');
}

/** A message's reference in the ledger: its author and timestamp. */
export function messageRefOf(message: Pick<IncomingSignalMessage, 'author' | 'timestamp'>): string {
  return `sg:${message.author}:${message.timestamp}`;
}

/** What a reply quotes: the timestamp and author `send` takes as quoteTimestamp and quoteAuthor. */
export function replyToOf(message: Pick<IncomingSignalMessage, 'author' | 'timestamp'>): string {
  return `${message.timestamp}:${message.author}`;
}

export function parseReplyTo(replyTo: string | null): { timestamp: number; author: string } | undefined {
  if (replyTo === null) return undefined;
  const match = /^(\d{1,16}):(.+)$/.exec(replyTo);
  if (!match) return undefined;
  const author = match[2]!;
  if (!UUID.test(author) && !NUMBER.test(author)) return undefined;
  return { timestamp: Number(match[1]), author };
}

/** A conversation's chatId: the person (UUID or number) for a direct message, `group:<id>` for a group. */
export function chatIdOf(message: Pick<IncomingSignalMessage, 'author' | 'groupId'>): string {
  return message.groupId === undefined ? message.author : `group:${message.groupId}`;
}

/** Where `send` and `sendTyping` go for a chatId: `recipient` or `groupId`; undefined for one that is neither. */
export function destinationOf(chatId: string): { recipient: string[] } | { groupId: string } | undefined {
  if (chatId.startsWith('group:')) {
    const groupId = chatId.slice('group:'.length);
    return GROUP_ID.test(groupId) ? { groupId } : undefined;
  }
  return UUID.test(chatId) || NUMBER.test(chatId) ? { recipient: [chatId] } : undefined;
}
