import { describe, expect, it } from 'vitest';
import { loadPlatformIds } from './fixtures/shared-data';
import { isSessionKeyUnsafe } from './path-safety';
import { createPseudonymiser } from './pseudonyms';
import { buildSessionKey, decodeKeyPart, DM_SCOPES, encodeKeyPart, pseudonymousKey, SessionKeyConfigError, type SessionKeyOptions } from './session-key';
import { CHAT_TYPES, type SessionSource } from './source';

const pseudonyms = createPseudonymiser(Buffer.alloc(32, 7));
const platformIds = loadPlatformIds();

function key(source: Partial<SessionSource>, options: Partial<SessionKeyOptions> = {}): string {
  return buildSessionKey({ platform: 'telegram', chatId: '1', chatType: 'group', ...source }, { pseudonyms, ...options });
}

describe('buildSessionKey: a table for every platform in platform-ids.json and every dmScope', () => {
  const platforms = Object.entries(platformIds);

  it('covers the platforms of the shared data', () => {
    expect(platforms.map(([name]) => name)).toEqual(
      expect.arrayContaining(['telegram', 'discord', 'slack', 'google_chat', 'matrix', 'whatsapp', 'signal', 'irc', 'xmpp', 'email', 'imessage']),
    );
  });

  for (const [platform, roles] of platforms) {
    const ids = [...new Set(Object.values(roles).flat())];

    for (const chatType of CHAT_TYPES.filter((type) => type !== 'direct')) {
      it(`${platform} ${chatType}: every id gives a safe key that names the chat by its pseudonym only, distinct ids distinct keys`, () => {
        const keys = ids.map((chatId) => key({ platform, chatId, chatType }));
        keys.forEach((built, index) => {
          expect(isSessionKeyUnsafe(built)).toBe(false);
          expect(built).toBe(`agent:main:${platform}:${chatType}:${pseudonyms.chatKey(platform, ids[index]!)}`);
          expect(built).toMatch(/:chat_[0-9a-f]{12}$/);
        });
        expect(new Set(keys).size).toBe(ids.length);
      });

      it(`${platform} ${chatType}: every id as a thread gives its own session`, () => {
        const chatId = ids[0]!;
        const keys = ids.map((threadId) => key({ platform, chatId, chatType, threadId }));
        keys.forEach((built) => expect(isSessionKeyUnsafe(built)).toBe(false));
        expect(new Set([...keys, key({ platform, chatId, chatType })]).size).toBe(ids.length + 1);
      });
    }

    for (const dmScope of DM_SCOPES) {
      it(`${platform} direct, dmScope ${dmScope}: safe keys that name the peer by pseudonym only`, () => {
        const keys = ids.map((senderId) => key({ platform, chatId: senderId, senderId, chatType: 'direct' }, { dmScope }));
        for (const [index, built] of keys.entries()) {
          expect(isSessionKeyUnsafe(built)).toBe(false);
          expect(built).not.toContain(ids[index]);
        }
        switch (dmScope) {
          case 'main':
            expect(new Set(keys)).toEqual(new Set(['agent:main:main']));
            break;
          case 'per-peer':
            keys.forEach((built) => expect(built).toMatch(/^agent:main:direct:user_[0-9a-f]{12}$/));
            expect(new Set(keys).size).toBe(ids.length);
            break;
          case 'per-platform-peer':
            keys.forEach((built) => expect(built).toMatch(new RegExp(`^agent:main:${platform}:direct:user_[0-9a-f]{12}$`)));
            expect(new Set(keys).size).toBe(ids.length);
            break;
        }
      });
    }
  }
});

describe('buildSessionKey: the routing rules', () => {
  it.each<[string, Partial<SessionSource>, string]>([
    ['a Telegram supergroup', { platform: 'telegram', chatId: '-1001234567890' }, `agent:main:telegram:group:${pseudonyms.chatKey('telegram', '-1001234567890')}`],
    [
      'a Telegram forum topic',
      { platform: 'telegram', chatId: '-1001234567890', threadId: '42' },
      `agent:main:telegram:group:${pseudonyms.chatKey('telegram', '-1001234567890')}:thread:${pseudonyms.thread('telegram', '42')}`,
    ],
    [
      'a Discord thread (a channel of its own)',
      { platform: 'discord', chatId: '1234567890123456789', chatType: 'thread' },
      `agent:main:discord:thread:${pseudonyms.chatKey('discord', '1234567890123456789')}`,
    ],
    [
      'a Slack thread',
      { platform: 'slack', chatId: 'C0123ABCD45', chatType: 'channel', threadId: '1712345678.123456' },
      `agent:main:slack:channel:${pseudonyms.chatKey('slack', 'C0123ABCD45')}:thread:${pseudonyms.thread('slack', '1712345678.123456')}`,
    ],
    [
      'a Telegram forum topic in a direct chat',
      { platform: 'telegram', chatId: '7100000001', senderId: '7100000001', chatType: 'direct', threadId: '9000017' },
      `agent:main:telegram:direct:${pseudonyms.person('telegram', '7100000001')}:thread:${pseudonyms.thread('telegram', '9000017')}`,
    ],
  ])('%s: no raw id in the key', (_what, source, expected) => {
    const built = key(source);
    expect(built).toBe(expected);
    for (const raw of [source.chatId, source.threadId, source.senderId]) if (raw !== undefined) expect(built).not.toContain(raw);
  });

  it('never lowercases: rooms that differ only by case are different sessions', () => {
    expect(key({ platform: 'matrix', chatId: '!abcDEF123:example.org' })).not.toBe(key({ platform: 'matrix', chatId: '!abcdef123:example.org' }));
  });

  it('cannot be fooled by an id that imitates the thread suffix', () => {
    expect(key({ chatId: 'x', threadId: 'y' })).toMatch(/^agent:main:telegram:group:chat_[0-9a-f]{12}:thread:thread_[0-9a-f]{12}$/);
    expect(key({ chatId: 'x:thread:y' })).not.toBe(key({ chatId: 'x', threadId: 'y' }));
  });

  it('gives each sender of a group a session of their own only with groupSessionsPerUser', () => {
    const alice = { chatId: '-100', senderId: '1' };
    const bob = { chatId: '-100', senderId: '2' };
    expect(key(alice)).toBe(key(bob));
    expect(key(alice, { groupSessionsPerUser: true })).not.toBe(key(bob, { groupSessionsPerUser: true }));
    expect(key(alice, { groupSessionsPerUser: true })).toBe(`agent:main:telegram:group:${pseudonyms.chatKey('telegram', '-100')}:sender:${pseudonyms.person('telegram', '1')}`);
  });

  it('per-peer shares a session for the same raw id on two platforms; per-platform-peer does not', () => {
    const onTelegram = { platform: 'telegram', chatId: '123', senderId: '123', chatType: 'direct' as const };
    const onDiscord = { platform: 'discord', chatId: '999', senderId: '123', chatType: 'direct' as const };
    expect(key(onTelegram, { dmScope: 'per-peer' })).toBe(key(onDiscord, { dmScope: 'per-peer' }));
    expect(key(onTelegram)).not.toBe(key(onDiscord));
  });

  it('identityLinks put the same person on two platforms into one direct session', () => {
    const identityLinks = { alice: ['telegram:123456789', 'matrix:@alice:example.org'] };
    const onTelegram = { platform: 'telegram', chatId: '123456789', senderId: '123456789', chatType: 'direct' as const };
    const onMatrix = { platform: 'matrix', chatId: '!dm:example.org', senderId: '@alice:example.org', chatType: 'direct' as const };
    const stranger = { platform: 'matrix', chatId: '!dm2:example.org', senderId: '@mallory:example.org', chatType: 'direct' as const };
    for (const dmScope of ['per-peer', 'per-platform-peer'] as const) {
      expect(key(onTelegram, { dmScope, identityLinks })).toBe(key(onMatrix, { dmScope, identityLinks }));
      expect(key(onTelegram, { dmScope, identityLinks })).toBe(`agent:main:direct:${pseudonyms.linkedPerson('alice')}`);
      expect(key(stranger, { dmScope, identityLinks })).not.toBe(key(onMatrix, { dmScope, identityLinks }));
    }
  });

  it('uses the configured agent id', () => {
    expect(key({ chatId: '-1' }, { agentId: 'helper' })).toBe(`agent:helper:telegram:group:${pseudonyms.chatKey('telegram', '-1')}`);
  });

  it.each<[string, Partial<SessionKeyOptions>]>([
    ['a bad agent id', { agentId: 'Has Spaces' }],
    ['an identity link without a platform', { identityLinks: { alice: ['123'] } }],
    ['an identity linked to two names', { identityLinks: { alice: ['telegram:1'], bob: ['telegram:1'] } }],
  ])('refuses %s as a configuration error', (_what, options) => {
    expect(() => key({}, options)).toThrow(SessionKeyConfigError);
  });
});

describe('encodeKeyPart', () => {
  it.each(['..', '../etc', 'a/../b', 'foo/..', '...', 'a\\..\\b'])('escapes the all-dot segments of %j', (value) => {
    expect(encodeKeyPart(value).split(/[/\\]/)).not.toContain('..');
    expect(decodeKeyPart(encodeKeyPart(value))).toBe(value);
  });

  it('escapes the escape character, so already-escaped text stays distinct', () => {
    expect(encodeKeyPart('%3A')).not.toBe(encodeKeyPart(':'));
    expect(decodeKeyPart(encodeKeyPart('%3A'))).toBe('%3A');
  });
});

describe('pseudonymousKey: keys written before pseudonyms, renamed', () => {
  const old = (chatId: string, thread?: string) => `agent:main:matrix:group:${encodeKeyPart(chatId)}${thread === undefined ? '' : `:thread:${encodeKeyPart(thread)}`}`;

  it('gives the key the builder builds now, for a group, its thread and a sender of its own', () => {
    const source = { platform: 'matrix', chatId: '!abcDEF123:example.org', chatType: 'group' as const, threadId: '$event:example.org', senderId: '@a:example.org' };
    const now = buildSessionKey(source, { pseudonyms, groupSessionsPerUser: true });
    const before = `${old(source.chatId, source.threadId)}:sender:${pseudonyms.person('matrix', source.senderId)}`;
    expect(pseudonymousKey(before, 'matrix', pseudonyms)).toBe(now);
    expect(pseudonymousKey(old(source.chatId), 'matrix', pseudonyms)).toBe(key({ platform: 'matrix', chatId: source.chatId }));
  });

  it('leaves a key with no raw id alone (undefined): direct chats, and keys renamed before', () => {
    const direct = key({ platform: 'telegram', chatId: '5', senderId: '5', chatType: 'direct' });
    expect(pseudonymousKey(direct, 'telegram', pseudonyms)).toBeUndefined();
    expect(pseudonymousKey(key({ chatId: '-100', threadId: '4' }), 'telegram', pseudonyms)).toBeUndefined();
    expect(pseudonymousKey('agent:main:main', 'telegram', pseudonyms)).toBeUndefined();
    expect(pseudonymousKey('not a key', 'telegram', pseudonyms)).toBeUndefined();
  });

  it('renames the raw thread of a direct chat, in every direct scope', () => {
    for (const dmScope of ['main', 'per-peer', 'per-platform-peer'] as const) {
      const source = { platform: 'telegram', chatId: '7', senderId: '7', chatType: 'direct' as const, threadId: '12' };
      const now = buildSessionKey(source, { pseudonyms, dmScope });
      const before = now.replace(pseudonyms.thread('telegram', '12'), '12');
      expect(before).not.toBe(now);
      expect(pseudonymousKey(before, 'telegram', pseudonyms)).toBe(now);
    }
  });
});
