import type { Element } from '@xmpp/client';
import type { XmppLibrary } from './load-xmpp-client';
import { NS_DELAY, parseAddress } from './inbound';

/**
 * The wire side of reading a room's archive (XEP-0313 Message Archive
 * Management, served for a MUC by prosody's mod_muc_mam): whether the room
 * keeps one, the queries, and what comes back. Hostile input: every part of an
 * answer may be missing or absurd.
 */

export const NS_MAM = 'urn:xmpp:mam:2';
export const NS_RSM = 'http://jabber.org/protocol/rsm';
export const NS_DISCO_INFO = 'http://jabber.org/protocol/disco#info';
const NS_DATA = 'jabber:x:data';
const NS_FORWARD = 'urn:xmpp:forward:0';

/**
 * Messages asked for per page. prosody answers at most `max_archive_query_results`
 * (50 by default) whatever is asked (mod_muc_mam.lua: `m_min(qset.max, max_max_items)`);
 * a smaller answer is read the same way, page after page until `complete`.
 */
export const ARCHIVE_PAGE = 50;

/** Where a read of the archive starts. */
export type ArchiveFrom =
  /** After this stanza-id (RSM `<after>`); prosody answers item-not-found when its archive no longer has it. */
  | { readonly kind: 'after'; readonly id: string }
  /** Everything sent at or after this time (ms), by the form's `start` field. */
  | { readonly kind: 'since'; readonly at: number }
  /** Only the newest message (RSM `<before/>` with max 1): where a first stay begins. */
  | { readonly kind: 'newest' };

type Xml = XmppLibrary['xml'];

/** disco#info to the room: its features say whether it archives (XEP-0313 §6.1: `urn:xmpp:mam:2`). */
export function discoInfo(xml: Xml, room: string): Element {
  return xml('iq', { type: 'get', to: room }, xml('query', { xmlns: NS_DISCO_INFO }));
}

export function keepsArchive(info: Element): boolean {
  const query = info.getChild('query', NS_DISCO_INFO);
  return query?.getChildren('feature').some((feature) => feature.attrs.var === NS_MAM) ?? false;
}

/** One page of the room's archive, its groupchat messages only (mod_muc_mam stores those as `message<groupchat`). */
export function archiveQuery(xml: Xml, room: string, queryId: string, from: ArchiveFrom): Element {
  const fields = [xml('field', { var: 'FORM_TYPE', type: 'hidden' }, xml('value', {}, NS_MAM))];
  if (from.kind === 'since') fields.push(xml('field', { var: 'start' }, xml('value', {}, new Date(from.at).toISOString())));
  const set =
    from.kind === 'newest'
      ? xml('set', { xmlns: NS_RSM }, xml('max', {}, '1'), xml('before', {}))
      : xml('set', { xmlns: NS_RSM }, xml('max', {}, String(ARCHIVE_PAGE)), ...(from.kind === 'after' ? [xml('after', {}, from.id)] : []));
  return xml('iq', { type: 'set', to: room }, xml('query', { xmlns: NS_MAM, queryid: queryId }, xml('x', { xmlns: NS_DATA, type: 'submit' }, ...fields), set));
}

/** A message the archive handed back: its archive id (the room's stanza-id), when it was sent, and the message as the room sent it. */
export interface ArchivedMessage {
  readonly id: string;
  readonly at: number | undefined;
  readonly message: Element;
}

/**
 * An archive result (`<message from=room><result queryid id><forwarded><delay/><message/>`)
 * for our query; undefined for anything else. Only the room itself may hand
 * its archive (a result from anyone else is someone's forgery).
 */
export function readArchived(stanza: Element, room: string, queryId: string): ArchivedMessage | undefined {
  const from = parseAddress(stanza.attrs.from);
  if (!from || from.bare !== room || from.resource !== '') return undefined;
  const result = stanza.getChild('result', NS_MAM);
  if (!result || result.attrs.queryid !== queryId) return undefined;
  const id = result.attrs.id;
  if (!id || id.length > 200) return undefined;
  const forwarded = result.getChild('forwarded', NS_FORWARD);
  const message = forwarded?.getChild('message');
  if (!forwarded || !message) return undefined;
  const stamp = Date.parse(forwarded.getChild('delay', NS_DELAY)?.attrs.stamp ?? '');
  return { id, at: Number.isFinite(stamp) ? stamp : undefined, message };
}

/** Whether the room's answer was the whole rest of the archive, and the last id on this page (where the next page starts). */
export function readFin(answer: Element): { readonly complete: boolean; readonly last: string | undefined } {
  const fin = answer.getChild('fin', NS_MAM);
  const last = fin?.getChild('set', NS_RSM)?.getChildText('last', NS_RSM) ?? undefined;
  // XEP-0313 §4.3: complete="true" on the last page; prosody leaves it out on the others.
  return { complete: fin?.attrs.complete === 'true', last: last && last.length <= 200 ? last : undefined };
}
