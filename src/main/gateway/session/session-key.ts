import { isSessionKeyUnsafe } from './path-safety';
import type { Pseudonymiser } from './pseudonyms';
import type { SessionSource } from './source';

export const DM_SCOPES = ['main', 'per-peer', 'per-platform-peer'] as const;
/**
 * - `main`: every direct chat, on every platform, is one conversation.
 * - `per-peer`: one per person id, whatever the platform (the same raw id on two
 *   platforms is taken to be one person).
 * - `per-platform-peer` (default): one per person per platform.
 */
export type DmScope = (typeof DM_SCOPES)[number];

/** `{ alice: ['telegram:123456789', 'matrix:@alice:example.org'] }`: one person, one DM session. */
export type IdentityLinks = Readonly<Record<string, readonly string[]>>;

export interface SessionKeyOptions {
  readonly pseudonyms: Pseudonymiser;
  readonly agentId?: string;
  readonly dmScope?: DmScope;
  /** In groups and channels, each sender gets a conversation of their own. */
  readonly groupSessionsPerUser?: boolean;
  readonly identityLinks?: IdentityLinks;
}

export const DEFAULT_AGENT_ID = 'main';
const AGENT_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export class SessionKeyConfigError extends Error {
  override readonly name = 'SessionKeyConfigError';
}

/**
 * `agent:<agentId>:<platform>:<chatType>:chat_<12 hex>[:thread:thread_<12 hex>][:sender:<pseudonym>]`;
 * a direct chat's peer appears as its pseudonym, and `main` / `per-peer` / linked
 * direct chats drop the platform (`agent:<agentId>:main`, `agent:<agentId>:direct:<pseudonym>`).
 *
 * No raw id is in a key: a group's chat and a thread appear as pseudonyms (keyed
 * MACs of the raw id, case and every character included, so Matrix rooms that
 * differ by case alone stay apart). A key is stored (the session index, the
 * ledger, transcript headers) and shown (`/status`, the window); the raw ids
 * needed to reply live in the session index's `address` and the ledger's target.
 * Keys written before pseudonyms (raw ids, escaped) are renamed once at start
 * (`pseudonymousKey`).
 */
export function buildSessionKey(source: SessionSource, options: SessionKeyOptions): string {
  return createSessionKeyBuilder(options)(source);
}

/** Checks the options once (identity links are indexed) and returns the builder. */
export function createSessionKeyBuilder(options: SessionKeyOptions): (source: SessionSource) => string {
  const agentId = options.agentId ?? DEFAULT_AGENT_ID;
  if (!AGENT_ID.test(agentId)) throw new SessionKeyConfigError(`agentId "${agentId}" must be a lower-case word`);
  const dmScope = options.dmScope ?? 'per-platform-peer';
  const perUser = options.groupSessionsPerUser ?? false;
  const { pseudonyms } = options;
  const links = indexIdentityLinks(options.identityLinks ?? {});

  return (source) => {
    const parts = ['agent', agentId];
    if (source.chatType === 'direct') {
      const peerId = source.senderId ?? source.chatId;
      const link = links.get(linkEntry(source.platform, peerId));
      if (dmScope === 'main') parts.push('main');
      else if (link !== undefined) parts.push('direct', pseudonyms.linkedPerson(link));
      else if (dmScope === 'per-peer') parts.push('direct', pseudonyms.peer(peerId));
      else parts.push(source.platform, 'direct', pseudonyms.person(source.platform, peerId));
    } else {
      parts.push(source.platform, source.chatType, pseudonyms.chatKey(source.platform, source.chatId));
    }
    if (source.threadId !== undefined) parts.push('thread', pseudonyms.thread(source.platform, source.threadId));
    if (perUser && source.chatType !== 'direct' && source.senderId !== undefined) {
      parts.push('sender', pseudonyms.person(source.platform, source.senderId));
    }
    const key = parts.join(':');
    // Unreachable by construction (every part is escaped); kept so a future
    // change to the escaping cannot quietly produce an unsafe key.
    if (isSessionKeyUnsafe(key)) throw new Error(`built an unsafe session key for ${source.platform}`);
    return key;
  };
}

const SHARED_CHATS: ReadonlySet<string> = new Set(['group', 'channel', 'thread']);

/**
 * A key as `buildSessionKey` builds it now, from one written before keys were
 * pseudonymous (a group's raw chat id, a raw thread id, escaped): undefined when
 * it holds no raw id. `platform` is the conversation's (a `per-peer` key does not
 * name it). Pure, so a start interrupted while renaming only renames again.
 */
export function pseudonymousKey(key: string, platform: string, pseudonyms: Pseudonymiser): string | undefined {
  const parts = key.split(':');
  if (parts[0] !== 'agent' || parts.length < 3) return undefined;
  // Where a thread part may follow: after `main`, after a direct chat's pseudonym, or after a shared chat's id.
  let next: number;
  if (parts[2] === 'main') next = 3;
  else if (parts[2] === 'direct') next = 4;
  else if (parts[3] === 'direct') next = 5;
  else if (parts.length >= 5 && SHARED_CHATS.has(parts[3]!)) {
    if (!parts[4]!.startsWith('chat_')) parts[4] = pseudonyms.chatKey(parts[2]!, decodeKeyPart(parts[4]!));
    next = 5;
  } else return undefined;
  const thread = parts[next + 1];
  if (parts[next] === 'thread' && thread !== undefined && !thread.startsWith('thread_')) parts[next + 1] = pseudonyms.thread(platform, decodeKeyPart(thread));
  const renamed = parts.join(':');
  return renamed === key ? undefined : renamed;
}

function linkEntry(platform: string, id: string): string {
  return `${platform}:${id}`;
}

function indexIdentityLinks(links: IdentityLinks): Map<string, string> {
  const index = new Map<string, string>();
  for (const [name, entries] of Object.entries(links)) {
    if (name.length === 0) throw new SessionKeyConfigError('identityLinks: a link needs a name');
    for (const entry of entries) {
      const colon = entry.indexOf(':');
      if (colon <= 0 || colon === entry.length - 1) {
        throw new SessionKeyConfigError(`identityLinks.${name}: "${entry}" must look like "<platform>:<sender id>"`);
      }
      const other = index.get(entry);
      if (other !== undefined && other !== name) {
        throw new SessionKeyConfigError(`identityLinks: "${entry}" is linked to both "${other}" and "${name}"`);
      }
      index.set(entry, name);
    }
  }
  return index;
}

// eslint-disable-next-line no-control-regex
const ESCAPED = /[%:\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Percent-escapes `%`, `:`, control and bidi characters and unpaired surrogates
 * (SQLite would store those as U+FFFD, merging distinct ids), and the dots of
 * any all-dot path segment. `%` itself is always escaped, so the escaping is
 * reversible and therefore never maps two ids to one part.
 */
export function encodeKeyPart(value: string): string {
  const escaped = value.replace(ESCAPED, escapeUnit);
  return escaped.replace(/(^|[/\\])(\.{2,})(?=$|[/\\])/g, (_match, separator: string, dots: string) => separator + '%2E'.repeat(dots.length));
}

export function decodeKeyPart(value: string): string {
  return value.replace(/%u([0-9A-F]{4})|%([0-9A-F]{2})/g, (_match, wide: string | undefined, narrow: string | undefined) =>
    String.fromCharCode(parseInt(wide ?? narrow!, 16)),
  );
}

function escapeUnit(unit: string): string {
  const code = unit.charCodeAt(0);
  return code < 0x100 ? '%' + code.toString(16).toUpperCase().padStart(2, '0') : '%u' + code.toString(16).toUpperCase().padStart(4, '0');
}
