import { z } from 'zod';
import type { MediaOffer } from '../../media/media';
import { MEDIA_MSGTYPES, readMediaMessage } from './media-offer';

/**
 * /sync answers as the adapter sees them: validated (the network is hostile),
 * each room reduced to its state changes and its timeline, each message to
 * what a conversation needs. Facts from PLATFORMS.md (Matrix section).
 */

/** Longer than any message a client sends in one event; a body beyond it is cut, not trusted. */
const MAX_TEXT = 16_384;
const MAX_NAME = 256;
const MAX_EVENTS_PER_ROOM = 1_000;
const MAX_ROOMS = 2_000;

const idString = z.string().min(1).max(512);
const eventSchema = z.object({
  event_id: idString.optional(),
  type: z.string().max(255),
  sender: z.string().max(255).optional(),
  state_key: z.string().max(512).optional(),
  origin_server_ts: z.number().optional(),
  content: z.record(z.string(), z.unknown()).optional(),
  redacts: z.string().max(512).optional(),
  unsigned: z.object({ transaction_id: z.string().max(512).optional() }).passthrough().optional(),
});
export type SyncEvent = z.output<typeof eventSchema>;

const eventList = z.object({ events: z.array(z.unknown()).max(MAX_EVENTS_PER_ROOM).optional() }).optional();
const joinedRoomSchema = z.object({
  timeline: z
    .object({ events: z.array(z.unknown()).max(MAX_EVENTS_PER_ROOM).optional(), limited: z.boolean().optional(), prev_batch: z.string().max(4096).optional() })
    .optional(),
  state: eventList,
});
const inviteSchema = z.object({ invite_state: eventList });
const syncSchema = z.object({
  next_batch: z.string().min(1).max(4096),
  rooms: z
    .object({
      join: z.record(z.string(), z.unknown()).optional(),
      invite: z.record(z.string(), z.unknown()).optional(),
      leave: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
  account_data: eventList,
});

export interface JoinedRoomUpdate {
  readonly roomId: string;
  readonly state: readonly SyncEvent[];
  readonly timeline: readonly SyncEvent[];
  readonly limited: boolean;
  readonly prevBatch: string | undefined;
}

export interface InviteUpdate {
  readonly roomId: string;
  readonly inviter: string | undefined;
  readonly isDirect: boolean;
  readonly encrypted: boolean;
  readonly name: string | undefined;
}

export interface SyncBatch {
  readonly nextBatch: string;
  readonly joined: readonly JoinedRoomUpdate[];
  readonly invites: readonly InviteUpdate[];
  readonly left: readonly string[];
  /** The bot's `m.direct` (user → rooms), when it changed. */
  readonly direct: ReadonlyMap<string, readonly string[]> | undefined;
}

export type ParsedSync = { readonly ok: true; readonly batch: SyncBatch } | { readonly ok: false; readonly error: string };

const ROOM_ID = /^![^\s]{1,254}$/;

export function parseSync(raw: unknown, ownUserId: string): ParsedSync {
  const parsed = syncSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, error: 'the sync answer is not one Homing can read' };
  const { next_batch: nextBatch, rooms = {}, account_data: accountData } = parsed.data;
  const joined: JoinedRoomUpdate[] = [];
  for (const [roomId, value] of Object.entries(rooms.join ?? {}).slice(0, MAX_ROOMS)) {
    if (!ROOM_ID.test(roomId)) continue;
    const room = joinedRoomSchema.safeParse(value);
    if (!room.success) continue;
    joined.push({
      roomId,
      state: events(room.data.state?.events),
      timeline: events(room.data.timeline?.events),
      limited: room.data.timeline?.limited === true,
      prevBatch: room.data.timeline?.prev_batch,
    });
  }
  const invites: InviteUpdate[] = [];
  for (const [roomId, value] of Object.entries(rooms.invite ?? {}).slice(0, MAX_ROOMS)) {
    if (!ROOM_ID.test(roomId)) continue;
    const invite = inviteSchema.safeParse(value);
    if (!invite.success) continue;
    const state = events(invite.data.invite_state?.events);
    const own = state.find((event) => event.type === 'm.room.member' && event.state_key === ownUserId);
    const name = state.find((event) => event.type === 'm.room.name')?.content?.name;
    invites.push({
      roomId,
      inviter: own?.sender,
      isDirect: own?.content?.is_direct === true,
      encrypted: state.some((event) => event.type === 'm.room.encryption'),
      name: typeof name === 'string' ? bounded(name) : undefined,
    });
  }
  const left = Object.keys(rooms.leave ?? {}).filter((roomId) => ROOM_ID.test(roomId));
  let direct: Map<string, string[]> | undefined;
  for (const event of events(accountData?.events)) {
    if (event.type !== 'm.direct' || !event.content) continue;
    direct = new Map();
    for (const [user, list] of Object.entries(event.content)) {
      if (Array.isArray(list)) direct.set(user, list.filter((item): item is string => typeof item === 'string' && ROOM_ID.test(item)));
    }
  }
  return { ok: true, batch: { nextBatch, joined, invites, left, direct } };
}

/** The events of a list that can be read; the rest are dropped. */
export function events(list: readonly unknown[] | undefined): SyncEvent[] {
  const out: SyncEvent[] = [];
  for (const raw of list ?? []) {
    const event = eventSchema.safeParse(raw);
    if (event.success) out.push(event.data);
  }
  return out;
}

/** What one m.room.message means. */
export type MessageMeaning =
  | {
      readonly kind: 'message';
      readonly text: string;
      readonly threadRoot: string | undefined;
      readonly inReplyTo: string | undefined;
      readonly mentions: readonly string[];
      readonly formatted: string | undefined;
      /** The file of a media message (media-offer.ts), fetched before its turn; empty for text and unreadable media. */
      readonly media: readonly MediaOffer[];
    }
  | { readonly kind: 'edit'; readonly target: string; readonly text: string }
  /** A notice (another bot's output, by convention never answered), or nothing readable. */
  | { readonly kind: 'ignore'; readonly reason: string };

export function readMessage(event: SyncEvent): MessageMeaning {
  const content = event.content ?? {};
  const relation = typeof content['m.relates_to'] === 'object' && content['m.relates_to'] !== null ? (content['m.relates_to'] as Record<string, unknown>) : {};
  if (relation.rel_type === 'm.replace' && typeof relation.event_id === 'string') {
    const replacement = typeof content['m.new_content'] === 'object' && content['m.new_content'] !== null ? (content['m.new_content'] as Record<string, unknown>) : {};
    const text = typeof replacement.body === 'string' ? replacement.body : undefined;
    return text === undefined ? { kind: 'ignore', reason: 'an edit without text' } : { kind: 'edit', target: relation.event_id, text: cut(text) };
  }
  const msgtype = typeof content.msgtype === 'string' ? content.msgtype : '';
  const body = typeof content.body === 'string' ? content.body : '';
  if (msgtype === 'm.notice') return { kind: 'ignore', reason: 'a notice' };
  const threadRoot = relation.rel_type === 'm.thread' && typeof relation.event_id === 'string' && relation.event_id.length <= 512 ? relation.event_id : undefined;
  const replyRelation = typeof relation['m.in_reply_to'] === 'object' && relation['m.in_reply_to'] !== null ? (relation['m.in_reply_to'] as Record<string, unknown>) : {};
  // In a thread, the in-reply-to of a plain thread message is only a fallback for clients without threads.
  const isFallback = threadRoot !== undefined && relation.is_falling_back === true;
  const inReplyTo = typeof replyRelation.event_id === 'string' && !isFallback ? replyRelation.event_id : undefined;
  const mentionsRaw = typeof content['m.mentions'] === 'object' && content['m.mentions'] !== null ? (content['m.mentions'] as Record<string, unknown>).user_ids : undefined;
  const mentions = Array.isArray(mentionsRaw) ? mentionsRaw.filter((id): id is string => typeof id === 'string').slice(0, 100) : [];
  const formatted = content.format === 'org.matrix.custom.html' && typeof content.formatted_body === 'string' ? content.formatted_body.slice(0, MAX_TEXT * 4) : undefined;
  const plain = inReplyTo !== undefined && threadRoot === undefined ? stripReplyFallback(body) : body;
  if (MEDIA_MSGTYPES.has(msgtype)) {
    const media = readMediaMessage(msgtype, cut(plain), content);
    return { kind: 'message', text: media.text, threadRoot, inReplyTo, mentions, formatted, media: media.offer ? [media.offer] : [] };
  }
  const text = describeMessage(msgtype, cut(plain), content);
  if (text === undefined || text.trim() === '') return { kind: 'ignore', reason: 'a message without text' };
  return { kind: 'message', text, threadRoot, inReplyTo, mentions, formatted, media: [] };
}

/** The text for the agent: the message's own, or a short description of a place (media: media-offer.ts). */
function describeMessage(msgtype: string, body: string, content: Record<string, unknown>): string | undefined {
  switch (msgtype) {
    case 'm.text':
    case '':
      return body;
    case 'm.emote':
      return `* ${body}`;
    case 'm.location':
      return `[location${typeof content.geo_uri === 'string' ? ` ${bounded(content.geo_uri)}` : body ? `: ${bounded(body)}` : ''}]`;
    default:
      return body || undefined;
  }
}

/** "> <@alice:x> quoted\n> more\n\nthe reply" → "the reply" (the quote is for clients without replies). */
export function stripReplyFallback(body: string): string {
  const lines = body.split('\n');
  let index = 0;
  while (index < lines.length && lines[index]!.startsWith('>')) index++;
  if (index === 0) return body;
  if (index < lines.length && lines[index]!.trim() === '') index++;
  const rest = lines.slice(index).join('\n');
  return rest.trim() === '' ? body : rest;
}

function cut(text: string): string {
  return text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) + ' […]' : text;
}

export function bounded(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const clean = text.replace(/[\p{Cc}]/gu, ' ').trim();
  if (clean === '') return undefined;
  const points = [...clean];
  return points.length > MAX_NAME ? points.slice(0, MAX_NAME).join('') : clean;
}
