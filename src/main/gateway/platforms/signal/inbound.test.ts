import { describe, expect, it } from 'vitest';
import { chatIdOf, destinationOf, messageRefOf, parseReceived, parseReplyTo, receivedItems, replyToOf } from './inbound';

const self = { number: '+15550000001', uuid: '11111111-1111-4111-8111-111111111111' };
const alice = { number: '+15550000002', uuid: '22222222-2222-4222-8222-222222222222' };
const GROUP = 'A'.repeat(43) + '=';

function item(dataMessage: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}) {
  return {
    envelope: { source: alice.number, sourceNumber: alice.number, sourceUuid: alice.uuid, sourceName: 'Alice', sourceDevice: 1, timestamp: 1700000000123, ...(dataMessage ? { dataMessage } : {}), ...extra },
    account: self.number,
  };
}

describe('received Signal messages', () => {
  it('reads a direct message: author by UUID, its timestamp, its text', () => {
    const parsed = parseReceived(item({ timestamp: 1700000000123, message: 'hello' }), self);
    expect(parsed).toEqual({
      kind: 'message',
      message: { author: alice.uuid, authorNumber: alice.number, authorUuid: alice.uuid, authorName: 'Alice', timestamp: 1700000000123, text: 'hello', groupId: undefined, groupName: undefined, addressed: false },
    });
    if (parsed.kind !== 'message') return;
    expect(messageRefOf(parsed.message)).toBe(`sg:${alice.uuid}:1700000000123`);
    expect(chatIdOf(parsed.message)).toBe(alice.uuid);
    expect(parseReplyTo(replyToOf(parsed.message))).toEqual({ timestamp: 1700000000123, author: alice.uuid });
  });

  it('takes the bot’s mention out of the text and counts it, and counts a quote of the bot’s message', () => {
    const mentioned = parseReceived(item({ message: '\uFFFC what time is it', mentions: [{ number: self.number, uuid: self.uuid, start: 0, length: 1 }], groupInfo: { groupId: GROUP, groupName: 'Family' } }), self);
    expect(mentioned).toMatchObject({ kind: 'message', message: { text: 'what time is it', addressed: true, groupId: GROUP, groupName: 'Family' } });
    const other = parseReceived(item({ message: 'ask \uFFFC', mentions: [{ number: alice.number, uuid: alice.uuid, start: 4, length: 1 }], groupInfo: { groupId: GROUP } }), self);
    expect(other).toMatchObject({ message: { text: 'ask @', addressed: false } });
    const quoted = parseReceived(item({ message: 'and then?', quote: { id: 5, authorNumber: self.number, authorUuid: self.uuid }, groupInfo: { groupId: GROUP } }), self);
    expect(quoted).toMatchObject({ message: { addressed: true } });
    if (mentioned.kind === 'message') expect(chatIdOf(mentioned.message)).toBe(`group:${GROUP}`);
  });

  it('passes over receipts, typing, sync messages, its own messages, empty text and broken envelopes', () => {
    const ignored = [
      item(undefined, { receiptMessage: { isDelivery: true } }),
      item(undefined, { typingMessage: { action: 'STARTED' } }),
      item(undefined, { syncMessage: { sentMessage: { message: 'from my phone' } } }),
      { envelope: { sourceNumber: self.number, sourceUuid: self.uuid, timestamp: 1, dataMessage: { message: 'me' } } },
      item({ message: '   ' }),
      item({ message: 'x', groupInfo: { groupId: '!!not base64!!' } }),
      { envelope: { timestamp: 5, dataMessage: { message: 'no sender' } } },
      item({ message: 'x' }, { timestamp: 'soon' }),
      null,
      'a string',
      { envelope: [] },
    ];
    for (const entry of ignored) expect(parseReceived(entry, self).kind, JSON.stringify(entry)).toBe('ignore');
  });

  it('hands on a message with only a file, described in words, with its offer; its body as the text when it has one', () => {
    const photo = { contentType: 'image/jpeg', filename: null, id: 'p1.jpg', size: 10, width: 1, height: 1, caption: null, uploadTimestamp: 1 };
    const bare = parseReceived(item({ message: null, attachments: [photo] }), self);
    expect(bare).toMatchObject({ kind: 'message', message: { text: '[photo]', media: [{ kind: 'image', source: `sg:p1.jpg:10:${alice.uuid}`, mime: 'image/jpeg', size: 10 }] } });
    const captioned = parseReceived(item({ message: null, attachments: [{ ...photo, caption: 'my cat' }] }), self);
    expect(captioned).toMatchObject({ message: { text: 'my cat' } });
    const said = parseReceived(item({ message: 'what plant?', attachments: [photo] }), self);
    expect(said).toMatchObject({ message: { text: 'what plant?', media: [{ kind: 'image' }] } });
    // In a group, the bot's mention alone with a file: the file stands for the text, and the message is addressed.
    const mention = parseReceived(item({ message: '\uFFFC', mentions: [{ number: self.number, uuid: self.uuid, start: 0, length: 1 }], attachments: [photo], groupInfo: { groupId: GROUP } }), self);
    expect(mention).toMatchObject({ message: { text: '[photo]', addressed: true, media: [{ source: `sg:p1.jpg:10:group:${GROUP}` }] } });
    expect(parseReceived(item({ message: 'no files' }), self)).not.toHaveProperty('message.media');
  });

  it('keeps a message whose attachments are hostile, naming what it cannot fetch', () => {
    const parsed = parseReceived(item({ message: null, attachments: [{ id: '../../secret', contentType: 'image/png' }, 'junk'] }), self);
    expect(parsed).toMatchObject({ kind: 'message', message: { text: '[photo: Homing cannot fetch it]\n[document: Homing cannot fetch it]' } });
    expect(parsed).not.toHaveProperty('message.media');
    expect(parseReceived(item({ message: 'hi', attachments: 'not a list' }), self)).toMatchObject({ message: { text: 'hi' } });
    // A long text's attachment alone is no file: its text is the body.
    expect(parseReceived(item({ message: '', attachments: [{ id: 'l.txt', contentType: 'text/x-signal-plain' }] }), self).kind).toBe('ignore');
  });

  it('finds the objects in a receive answer, an automatic notification and a subscription notification', () => {
    const one = item({ message: 'x' });
    expect(receivedItems('result', [one, one])).toEqual([one, one]);
    expect(receivedItems('result', { not: 'a list' })).toEqual([]);
    expect(receivedItems('notification', one)).toEqual([one]);
    expect(receivedItems('notification', { subscription: 0, result: one })).toEqual([one]);
  });

  it('sends to a person or a group, and to nothing else', () => {
    expect(destinationOf(alice.uuid)).toEqual({ recipient: [alice.uuid] });
    expect(destinationOf(alice.number)).toEqual({ recipient: [alice.number] });
    expect(destinationOf(`group:${GROUP}`)).toEqual({ groupId: GROUP });
    expect(destinationOf('group:')).toBeUndefined();
    expect(destinationOf('--help')).toBeUndefined();
    expect(parseReplyTo('12:not-a-person')).toBeUndefined();
    expect(parseReplyTo(null)).toBeUndefined();
  });
});
