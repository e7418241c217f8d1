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
 * `agent:<agentId>:<platform>:<chatType>:<chatId>[:thread:<threadId>][:sender:<pseudonym>]`;
 * a direct chat's peer appears as its pseudonym, and `main` / `per-peer` / linked
 * direct chats drop the platform (`agent:<agentId>:main`, `agent:<agentId>:direct:<pseudonym>`).
 *
 * Raw ids are kept verbatim, case included: Matrix room ids and Signal group ids
 * differ by case alone. Each id is escaped so that it contains no `:`, so the
 * key splits back into exactly its parts and two distinct sources can only
 * share a key if the routing rules say they should.
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
      parts.push(source.platform, source.chatType, encodeKeyPart(source.chatId));
    }
    if (source.threadId !== undefined) parts.push('thread', encodeKeyPart(source.threadId));
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
