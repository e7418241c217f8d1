import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_MEDIA_NAME } from '../../media/media';
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
        media: [],
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

  /** What a message offers, or what it was read as when it is not a message. */
  const media = (message: Record<string, unknown>) => {
    const parsed = parseUpdate(update(message), BOT);
    return parsed.kind === 'message' ? parsed.message.media : parsed.kind;
  };
  const FILE = 'AgACAgIAAxkBAAIBZ2dWq9_fake-file-id_0123456789abcdefABCDEF';

  it('offers the largest size of a photo as one JPEG image, wherever Telegram lists it', () => {
    const sizes = [
      { file_id: `${FILE}s`, file_unique_id: 'AQADs', width: 90, height: 68, file_size: 1_200 },
      { file_id: `${FILE}x`, file_unique_id: 'AQADx', width: 800, height: 600, file_size: 61_000 },
      { file_id: `${FILE}m`, file_unique_id: 'AQADm', width: 320, height: 240, file_size: 14_000 },
    ];
    expect(media({ photo: sizes, caption: 'sunset' })).toEqual([{ kind: 'image', source: `${FILE}x`, mime: 'image/jpeg', size: 61_000 }]);
    expect(media({ photo: [sizes[0]] })).toEqual([{ kind: 'image', source: `${FILE}s`, mime: 'image/jpeg', size: 1_200 }]);
  });

  it('offers a voice note (OGG unless it says otherwise), audio named by its file or its performer and title, and videos of every kind', () => {
    expect(media({ voice: { file_id: FILE, file_unique_id: 'u', duration: 12, file_size: 5_000 } })).toEqual([{ kind: 'voice', source: FILE, mime: 'audio/ogg', size: 5_000, durationS: 12 }]);
    expect(media({ voice: { file_id: FILE, duration: 3, mime_type: 'audio/mpeg' } })).toEqual([{ kind: 'voice', source: FILE, mime: 'audio/mpeg', durationS: 3 }]);
    expect(media({ audio: { file_id: FILE, duration: 200, file_name: 'song.mp3', mime_type: 'audio/mpeg', performer: 'Nina', title: 'Feeling Good' } })).toEqual([
      { kind: 'audio', source: FILE, mime: 'audio/mpeg', name: 'song.mp3', durationS: 200 },
    ]);
    expect(media({ audio: { file_id: FILE, duration: 200, performer: 'Nina', title: 'Feeling Good' } })).toEqual([{ kind: 'audio', source: FILE, name: 'Nina — Feeling Good', durationS: 200 }]);
    expect(media({ video: { file_id: FILE, duration: 60, width: 1, height: 1, mime_type: 'video/mp4', file_name: 'clip.mp4', file_size: 9 } })).toEqual([
      { kind: 'video', source: FILE, mime: 'video/mp4', name: 'clip.mp4', size: 9, durationS: 60 },
    ]);
    expect(media({ video_note: { file_id: FILE, duration: 8, length: 240 } })).toEqual([{ kind: 'video', source: FILE, mime: 'video/mp4', durationS: 8 }]);
  });

  it('takes a document sent with an image type as an image, any other as a document, and an animation with its document copy as one video', () => {
    expect(media({ document: { file_id: FILE, file_name: 'scan.PNG', mime_type: 'image/png', file_size: 10 } })).toEqual([{ kind: 'image', source: FILE, mime: 'image/png', name: 'scan.PNG', size: 10 }]);
    expect(media({ document: { file_id: FILE, file_name: 'a.pdf', mime_type: 'application/pdf' }, caption: 'read it' })).toEqual([
      { kind: 'document', source: FILE, mime: 'application/pdf', name: 'a.pdf' },
    ]);
    expect(media({ document: { file_id: FILE, mime_type: 'image/svg+xml' } })).toEqual([{ kind: 'document', source: FILE, mime: 'image/svg+xml' }]);
    // Bot API docs, Message.animation: the document field is set too, for backward compatibility.
    const gif = { file_id: `${FILE}a`, file_unique_id: 'u', width: 1, height: 1, duration: 2, mime_type: 'video/mp4', file_name: 'cat.gif.mp4' };
    expect(media({ animation: gif, document: { ...gif, file_id: `${FILE}a` } })).toEqual([{ kind: 'video', source: `${FILE}a`, mime: 'video/mp4', name: 'cat.gif.mp4', durationS: 2 }]);
  });

  it('offers nothing for text, stickers, locations and the like', () => {
    expect(media({ text: 'hi' })).toEqual([]);
    expect(media({ sticker: { file_id: FILE, emoji: '👍' } })).toEqual([]);
    expect(media({ location: { latitude: 1, longitude: 2 } })).toEqual([]);
    expect(media({ contact: { first_name: 'Bob', phone_number: '+1' } })).toEqual([]);
  });

  it('drops a malformed media field (or its bad detail) and keeps the message, still described', () => {
    const read = (message: Record<string, unknown>) => {
      const parsed = parseUpdate(update(message), BOT);
      return parsed.kind === 'message' ? { text: parsed.message.text, media: parsed.message.media } : parsed.kind;
    };
    // No usable file id: described, not offered.
    expect(read({ voice: { file_id: 'has spaces/and slashes', duration: 4 } })).toEqual({ text: '[voice note, 4 s]', media: [] });
    expect(read({ voice: { file_id: 'x'.repeat(2000), duration: 4 } })).toEqual({ text: '[voice note, 4 s]', media: [] });
    expect(read({ document: { file_id: 42, file_name: 'a.pdf' } })).toEqual({ text: '[document: a.pdf]', media: [] });
    // Not an object at all: what it was is still said.
    expect(read({ voice: 'x', caption: 'listen' })).toEqual({ text: '[voice note] listen', media: [] });
    expect(read({ photo: 'x', caption: 'sunset' })).toEqual({ text: '[photo: sunset]', media: [] });
    expect(read({ photo: [null, 7, { file_id: FILE }], caption: 'sunset' })).toEqual({ text: '[photo: sunset]', media: [{ kind: 'image', source: FILE, mime: 'image/jpeg' }] });
    expect(read({ document: null })).toEqual({ text: '[document]', media: [] });
    // A bad detail is dropped, the offer kept.
    for (const bad of [-1, 1.5, 2 ** 60, '10', null]) {
      expect(read({ document: { file_id: FILE, file_size: bad } }), String(bad)).toEqual({ text: '[document]', media: [{ kind: 'document', source: FILE }] });
    }
    for (const bad of ['image', 'image/png; charset=x', '../../etc', 'a'.repeat(300) + '/x', 7]) {
      expect(read({ document: { file_id: FILE, mime_type: bad } }), String(bad)).toEqual({ text: '[document]', media: [{ kind: 'document', source: FILE }] });
    }
    expect(read({ voice: { file_id: FILE, duration: -5 } })).toEqual({ text: '[voice note]', media: [{ kind: 'voice', source: FILE, mime: 'audio/ogg' }] });
    expect(read({ document: { file_id: FILE, file_name: 'x'.repeat(MAX_MEDIA_NAME * 4 + 1) } })).toEqual({ text: '[document]', media: [{ kind: 'document', source: FILE }] });
    expect(read({ sticker: { emoji: 'x'.repeat(100) } })).toEqual({ text: '[sticker]', media: [] });
  });

  it('shows a file name without control or direction-changing characters, cut to MAX_MEDIA_NAME code points', () => {
    const named = (file_name: string) => {
      const offers = media({ document: { file_id: FILE, file_name } });
      return Array.isArray(offers) ? offers[0]?.name : offers;
    };
    expect(named('report\u0000\n.pdf')).toBe('report.pdf');
    expect(named('invoice\u202Efdp.exe')).toBe('invoicefdp.exe');
    expect(named(' \u0007 ')).toBeUndefined();
    expect([...named('😀'.repeat(MAX_MEDIA_NAME + 50))!]).toHaveLength(MAX_MEDIA_NAME);
  });

  it('property: whatever a media field holds, a captioned message is read, with at most one offer of a well-formed file id', () => {
    const fields = ['photo', 'voice', 'audio', 'video', 'video_note', 'animation', 'document', 'sticker'] as const;
    const fileLike = fc.record(
      {
        file_id: fc.oneof(fc.string({ maxLength: 40 }), fc.constant(FILE), fc.jsonValue()),
        file_size: fc.oneof(fc.integer(), fc.double(), fc.jsonValue()),
        mime_type: fc.oneof(fc.constantFrom('image/png', 'audio/ogg', 'video/mp4'), fc.string({ maxLength: 20 }), fc.jsonValue()),
        file_name: fc.oneof(fc.string({ maxLength: 300 }), fc.jsonValue()),
        duration: fc.oneof(fc.integer(), fc.double(), fc.jsonValue()),
        width: fc.jsonValue(),
        height: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.constantFrom(...fields), fc.oneof(fileLike, fc.array(fileLike, { maxLength: 5 }), fc.jsonValue()), (field, value) => {
        const parsed = parseUpdate(update({ [field]: value, caption: 'see this' }), BOT);
        expect(parsed.kind).toBe('message');
        if (parsed.kind !== 'message') return;
        expect(parsed.message.media.length).toBeLessThanOrEqual(1);
        for (const offer of parsed.message.media) {
          expect(offer.source).toMatch(/^[A-Za-z0-9_-]{1,1024}$/);
          if (offer.size !== undefined) expect(Number.isSafeInteger(offer.size) && offer.size >= 0).toBe(true);
          if (offer.name !== undefined) expect([...offer.name].length).toBeLessThanOrEqual(MAX_MEDIA_NAME);
        }
      }),
      { numRuns: 2000 },
    );
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
