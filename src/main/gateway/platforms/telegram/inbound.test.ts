import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseUpdate } from './inbound';

const BOT = { id: 999, username: 'homing_bot' };
const alice = { id: 7000000001, is_bot: false, first_name: 'Alice', last_name: 'Liddell' };
const dm = { id: 7000000001, type: 'private', first_name: 'Alice' };
const forum = { id: -1001234567890, type: 'supergroup', title: 'Projects', is_forum: true };
const group = { id: -1001234567891, type: 'supergroup', title: 'Family' };

const update = (message: Record<string, unknown>) => ({ update_id: 5, message: { message_id: 10, date: 1, from: alice, chat: dm, ...message } });

describe('Telegram updates as Homing reads them', () => {
  it('maps a direct message to a direct conversation with names', () => {
    const parsed = parseUpdate(update({ text: 'hi' }), BOT);
    expect(parsed).toEqual({
      kind: 'message',
      updateId: 5,
      message: {
        chatId: '7000000001',
        chatType: 'direct',
        threadId: undefined,
        messageId: '10',
        senderId: '7000000001',
        senderName: 'Alice Liddell',
        senderIsBot: false,
        chatName: 'Alice',
        text: 'hi',
        addressed: false,
      },
    });
  });

  it('takes a topic only in a forum, and the General topic (1) as the chat itself', () => {
    const thread = (message: Record<string, unknown>) => {
      const parsed = parseUpdate(update(message), BOT);
      return parsed.kind === 'message' ? parsed.message.threadId : 'not a message';
    };
    expect(thread({ chat: forum, text: 'x', message_thread_id: 42, is_topic_message: true })).toBe('42');
    expect(thread({ chat: forum, text: 'x', message_thread_id: 1, is_topic_message: true })).toBeUndefined();
    expect(thread({ chat: forum, text: 'x' })).toBeUndefined();
    // A reply chain's id in a group without topics is not a topic.
    expect(thread({ chat: group, text: 'x', message_thread_id: 7 })).toBeUndefined();
  });

  it('is addressed by an @mention, a reply to the bot, a command (not one for another bot); the mention is dropped from the text', () => {
    const read = (message: Record<string, unknown>) => {
      const parsed = parseUpdate(update({ chat: group, ...message }), BOT);
      return parsed.kind === 'message' ? [parsed.message.addressed, parsed.message.text] : 'not a message';
    };
    expect(read({ text: '@Homing_Bot what now', entities: [{ type: 'mention', offset: 0, length: 11 }] })).toEqual([true, 'what now']);
    expect(read({ text: 'hey @homing_bot', entities: [{ type: 'mention', offset: 4, length: 11 }] })).toEqual([true, 'hey @homing_bot']);
    expect(read({ text: 'yes', reply_to_message: { message_id: 3, from: { id: 999, is_bot: true, first_name: 'Homing' } } })).toEqual([true, 'yes']);
    expect(read({ text: '/new@homing_bot', entities: [{ type: 'bot_command', offset: 0, length: 15 }] })).toEqual([true, '/new']);
    expect(read({ text: '/new@other_bot', entities: [{ type: 'bot_command', offset: 0, length: 14 }] })).toEqual([false, '/new@other_bot']);
    expect(read({ text: 'hi @someone', entities: [{ type: 'mention', offset: 3, length: 8 }] })).toEqual([false, 'hi @someone']);
    expect(read({ text: 'x', entities: [{ type: 'text_mention', offset: 0, length: 1, user: { id: 999, is_bot: true, first_name: 'Homing' } }] })).toEqual([true, 'x']);
  });

  it('turns media into a short text, so nothing is silently dropped', () => {
    const text = (message: Record<string, unknown>) => {
      const parsed = parseUpdate(update(message), BOT);
      return parsed.kind === 'message' ? parsed.message.text : parsed.kind;
    };
    expect(text({ photo: [{}], caption: 'sunset' })).toBe('[photo: sunset]');
    expect(text({ voice: { duration: 12 } })).toBe('[voice note, 12 s]');
    expect(text({ voice: { duration: 75 } })).toBe('[voice note, 1 min 15 s]');
    expect(text({ document: { file_name: 'a.pdf' }, caption: 'read it' })).toBe('[document: a.pdf: read it]');
    expect(text({ sticker: { emoji: '👍' } })).toBe('[sticker 👍]');
    expect(text({ video: { duration: 60 } })).toBe('[video, 1 min]');
    expect(text({ location: { latitude: 52.52, longitude: 13.405 } })).toBe('[location 52.52000, 13.40500]');
    expect(text({ new_chat_members: [] })).toBe('ignore');
  });

  it('reads a migration from either side', () => {
    expect(parseUpdate(update({ chat: { id: -5, type: 'group' }, migrate_to_chat_id: -1005 }), BOT)).toEqual({ kind: 'migrated', updateId: 5, from: '-5', to: '-1005' });
    expect(parseUpdate(update({ chat: { id: -1005, type: 'supergroup' }, migrate_from_chat_id: -5 }), BOT)).toEqual({ kind: 'migrated', updateId: 5, from: '-5', to: '-1005' });
  });

  it('property: any JSON at all is ignored or read, never thrown on', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const parsed = parseUpdate(value, BOT);
        expect(['ignore', 'message', 'migrated']).toContain(parsed.kind);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.record({ text: fc.string({ maxLength: 100 }), message_thread_id: fc.integer(), is_topic_message: fc.boolean() }, { requiredKeys: [] }), (fields) => {
        const parsed = parseUpdate(update({ chat: forum, ...fields }), BOT);
        if (parsed.kind === 'message' && parsed.message.threadId !== undefined) expect(parsed.message.threadId).not.toBe('1');
      }),
    );
  });

  it('cuts an oversized text instead of trusting it', () => {
    const parsed = parseUpdate(update({ text: 'x'.repeat(20_000) }), BOT);
    expect(parsed.kind === 'message' && parsed.message.text.length).toBeLessThan(17_000);
  });
});
