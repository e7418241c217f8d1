import type { Element } from '@xmpp/client';
import type { MediaOffer } from '../../media/media';
import { oobFile, textWithFile } from './oob';

/**
 * What an incoming `<message>` means for the gateway, decided from the stanza
 * alone (hostile input: every attribute may be missing or absurd). A file sent
 * as XEP-0066 Out of Band Data (oob.ts) comes as an offer, its body (usually
 * just the URL) as `[file: name]`.
 */

export const NS_ORIGIN_ID = 'urn:xmpp:sid:0';
export const NS_CHAT_STATES = 'http://jabber.org/protocol/chatstates';
export const NS_DELAY = 'urn:xmpp:delay';
export const NS_MUC = 'http://jabber.org/protocol/muc';
export const NS_MUC_USER = 'http://jabber.org/protocol/muc#user';
export const NS_STANZAS = 'urn:ietf:params:xml:ns:xmpp-stanzas';

/** The most text one incoming message may carry to the agent (longer bodies are cut). */
export const MAX_BODY_CHARS = 32_000;

export interface Address {
  /** `local@domain`, lower case. */
  readonly bare: string;
  /** What follows the first `/` (a resource, or a nick in a room), '' if none. */
  readonly resource: string;
}

/** Splits a JID at its first `/`; undefined when it is no JID at all. */
export function parseAddress(value: string | undefined): Address | undefined {
  if (!value || value.length > 3071) return undefined;
  const slash = value.indexOf('/');
  const bare = (slash < 0 ? value : value.slice(0, slash)).toLowerCase();
  if (!/^(?:[^@/\s]+@)?[^@/\s]+$/u.test(bare)) return undefined;
  return { bare, resource: slash < 0 ? '' : value.slice(slash + 1) };
}

export interface InboundContext {
  /** Our own bare JID. */
  readonly self: string;
  /** Room JID → our nick there, for the rooms we are configured for. */
  readonly roomNick: (room: string) => string | undefined;
  /** Whether the room answers every message (requireMention false). */
  readonly everyMessage: (room: string) => boolean;
  /** Whether an origin-id (or message id) is one of ours: a room reflecting our own message. */
  readonly isOwnId: (id: string) => boolean;
}

export type InboundDecision =
  | {
      readonly kind: 'direct';
      readonly from: string;
      readonly resource: string;
      readonly text: string;
      readonly id: string | undefined;
      /** Stored and handed again (offline storage): a previous run may have seen it. */
      readonly delayed: boolean;
      /** The file it carries (XEP-0066), when it carries one. */
      readonly media?: readonly MediaOffer[];
    }
  | {
      readonly kind: 'room';
      readonly room: string;
      readonly nick: string;
      readonly text: string;
      readonly id: string | undefined;
      /** Handed again (a stream-management resume re-sends it with a `<delay>`): a previous stream may have seen it. */
      readonly delayed: boolean;
      /** The file it carries (XEP-0066), when it carries one. */
      readonly media?: readonly MediaOffer[];
    }
  | { readonly kind: 'error'; readonly id: string; readonly from: string; readonly condition: string | undefined; readonly type: string | undefined; readonly text: string | undefined }
  | { readonly kind: 'ignore'; readonly why: string };

export function decideMessage(stanza: Element, context: InboundContext): InboundDecision {
  const type = stanza.attrs.type ?? 'normal';
  const from = parseAddress(stanza.attrs.from);
  if (type === 'error') {
    const id = stanza.attrs.id;
    if (!id || !from) return { kind: 'ignore', why: 'an error for nothing of ours' };
    const error = stanza.getChild('error');
    const condition = error?.children.find((child): child is Element => typeof child !== 'string' && child.attrs.xmlns === NS_STANZAS && child.name !== 'text')?.name;
    const text = error?.getChildText('text', NS_STANZAS) ?? undefined;
    return { kind: 'error', id, from: from.bare, condition, type: error?.attrs.type, text: text === null ? undefined : text };
  }
  if (!from) return { kind: 'ignore', why: 'no sender' };
  const body = stanza.getChildText('body');
  const file = oobFile(stanza);
  if ((body === null || body.trim() === '') && file === undefined) return { kind: 'ignore', why: 'no text (a chat state or a receipt)' };
  const text = body === null ? '' : body.length > MAX_BODY_CHARS ? `${body.slice(0, MAX_BODY_CHARS)} […]` : body;
  // A file's body is usually just its URL: the agent is told `[file: name]` instead, with the file.
  const withFile = (said: string) => (file === undefined ? { text: said } : { text: textWithFile(said, file), media: [file.offer] });
  const originId = stanza.getChild('origin-id', NS_ORIGIN_ID)?.attrs.id;
  const id = originId ?? stanza.attrs.id;

  if (type === 'groupchat') {
    const nick = context.roomNick(from.bare);
    if (nick === undefined) return { kind: 'ignore', why: 'a room we are not configured for' };
    if (!from.resource) return { kind: 'ignore', why: 'a message from the room itself' };
    if ((originId && context.isOwnId(originId)) || (stanza.attrs.id && context.isOwnId(stanza.attrs.id))) return { kind: 'ignore', why: 'our own message reflected' };
    if (from.resource === nick) return { kind: 'ignore', why: 'our own nick' };
    // History (despite maxstanzas=0, a server may send some): old talk, not addressed to us now.
    if (isRoomHistory(stanza, from.bare)) return { kind: 'ignore', why: 'room history' };
    const addressed = context.everyMessage(from.bare) ? text : addressedText(text, nick);
    if (addressed === undefined || (addressed.trim() === '' && file === undefined)) return { kind: 'ignore', why: 'not addressed to us' };
    return { kind: 'room', room: from.bare, nick: from.resource, ...withFile(addressed), id, delayed: stanza.getChild('delay', NS_DELAY) !== undefined };
  }
  if (type !== 'chat' && type !== 'normal') return { kind: 'ignore', why: `a ${type.slice(0, 20)} message` };
  // A private message through a room (room@conference/nick) is not a person's account: not taken.
  if (context.roomNick(from.bare) !== undefined) return { kind: 'ignore', why: 'a private message through a room' };
  if (from.bare === context.self) return { kind: 'ignore', why: 'from our own account' };
  if (!from.bare.includes('@')) return { kind: 'ignore', why: 'from a server, not a person' };
  return { kind: 'direct', from: from.bare, resource: from.resource, ...withFile(text), id, delayed: stanza.getChild('delay', NS_DELAY) !== undefined };
}

/**
 * Whether a groupchat stanza is the room's discussion history: XEP-0045 §7.2.15
 * stamps history with a `<delay>` whose `from` is the room's own JID (prosody
 * muc/history.lib.lua and mod_muc_mam.lua's muc-get-history both do). Any other
 * `<delay>` is not the room's: prosody's mod_smacks (outgoing_stanza_filter)
 * stamps every stanza it queues with `from` = our own bare JID and re-sends the
 * unacknowledged ones that way on a resume, so a message that was in flight on
 * a dead link comes back delayed and is live talk all the same. A `<delay>` that names no one
 * cannot be told apart, so it stays history, as before rooms had archives.
 */
export function isRoomHistory(stanza: Element, room: string): boolean {
  return stanza.getChildren('delay', NS_DELAY).some((delay) => {
    if (delay.attrs.from === undefined) return true;
    const stampedBy = parseAddress(delay.attrs.from);
    return stampedBy?.bare === room && stampedBy.resource === '';
  });
}

/**
 * The XEP-0359 `<stanza-id>` the room gave a message (its id in the room's
 * archive), or undefined. Only one whose `by` is the room counts: prosody's
 * mod_muc_mam removes any an occupant wrote claiming to be by the room
 * (muc-broadcast-message) before it adds its own.
 */
export function roomStanzaId(stanza: Element, room: string): string | undefined {
  const id = stanza.getChildren('stanza-id', NS_ORIGIN_ID).find((child) => parseAddress(child.attrs.by)?.bare === room)?.attrs.id;
  return id && id.length <= 200 ? id : undefined;
}

/**
 * The text of a room message addressed to `nick` (`homing: hi`, `homing, hi`,
 * `@homing hi`), without the address; undefined when it is not addressed to us.
 */
export function addressedText(text: string, nick: string): string | undefined {
  const trimmed = text.trimStart();
  const lowered = trimmed.toLowerCase();
  const name = nick.toLowerCase();
  for (const prefix of [`@${name}`, name]) {
    if (!lowered.startsWith(prefix)) continue;
    const rest = trimmed.slice(prefix.length);
    const match = /^(?:[:,]\s*|\s+)/u.exec(rest);
    if (match) return rest.slice(match[0].length);
    if (rest === '') return undefined;
  }
  return undefined;
}
