import { describe, expect, it } from 'vitest';
import { parseMessageCreate } from './inbound';

const BOT = '1014716157480000000';
const base = { id: '1100000000000000001', channel_id: '1100000000000000002', author: { id: '1100000000000000003', username: 'alice', global_name: 'Alice' }, content: 'hi', type: 0 };

describe('reading a Discord MESSAGE_CREATE', () => {
  it('takes a message, naming its sender, and strips a leading mention of the bot', () => {
    const parsed = parseMessageCreate({ ...base, guild_id: '1100000000000000009', content: `<@${BOT}> what time is it`, mentions: [{ id: BOT }] }, BOT);
    expect(parsed).toEqual({
      kind: 'message',
      message: { id: base.id, channelId: base.channel_id, guildId: '1100000000000000009', senderId: base.author.id, senderName: 'Alice', fromBot: false, text: 'what time is it', addressed: true, media: [] },
    });
  });

  it('counts a reply to the bot as addressed, and a plain message as not', () => {
    const reply = parseMessageCreate({ ...base, type: 19, referenced_message: { author: { id: BOT } } }, BOT);
    expect(reply.kind === 'message' && reply.message.addressed).toBe(true);
    const plain = parseMessageCreate(base, BOT);
    expect(plain.kind === 'message' && plain.message.addressed).toBe(false);
  });

  it('marks bots, webhooks and Discord itself as not to be answered', () => {
    for (const extra of [{ author: { ...base.author, bot: true } }, { webhook_id: '1100000000000000005' }, { author: { ...base.author, system: true } }]) {
      const parsed = parseMessageCreate({ ...base, ...extra }, BOT);
      expect(parsed.kind === 'message' && parsed.message.fromBot).toBe(true);
    }
  });

  it('turns attachments into text and ignores system messages and empty ones, keeping their place', () => {
    const withFile = parseMessageCreate({ ...base, content: '', attachments: [{ filename: 'cat.png' }] }, BOT);
    expect(withFile.kind === 'message' && withFile.message.text).toBe('[attachment: cat.png]');
    expect(parseMessageCreate({ ...base, type: 7 }, BOT)).toMatchObject({ kind: 'ignore', id: base.id, channelId: base.channel_id });
    expect(parseMessageCreate({ ...base, content: '' }, BOT)).toMatchObject({ kind: 'ignore', id: base.id });
  });

  it('refuses what is not a message: bad ids, wrong types, oversized fields', () => {
    expect(parseMessageCreate({ ...base, id: '12; DROP' }, BOT).kind).toBe('ignore');
    expect(parseMessageCreate({ ...base, author: null }, BOT).kind).toBe('ignore');
    expect(parseMessageCreate('nope', BOT).kind).toBe('ignore');
    expect(parseMessageCreate({ ...base, content: 'x'.repeat(100_000) }, BOT).kind).toBe('ignore');
  });
});
