import { describe, expect, it } from 'vitest';
import { fromSlackText, parseSlackMessage } from './inbound';

const BOT = 'U0BOT12345';
const base = { type: 'message', channel: 'C0CHANNEL1', user: 'U0ALICE123', text: 'hello', ts: '1712345678.000100', channel_type: 'channel' };

describe('a Slack message event, as the adapter takes it', () => {
  it('reads a plain message, a mention of the bot (stripped from the text) and a thread reply', () => {
    expect(parseSlackMessage(base, BOT)).toMatchObject({ kind: 'message', message: { channel: 'C0CHANNEL1', ts: base.ts, threadTs: undefined, senderId: 'U0ALICE123', text: 'hello', mentionsBot: false, direct: false } });
    const mention = parseSlackMessage({ ...base, text: `<@${BOT}> what time is it?` }, BOT);
    expect(mention).toMatchObject({ kind: 'message', message: { text: 'what time is it?', mentionsBot: true } });
    const reply = parseSlackMessage({ ...base, ts: '1712345679.000200', thread_ts: base.ts }, BOT);
    expect(reply).toMatchObject({ kind: 'message', message: { threadTs: base.ts } });
    // A thread's root carries its own ts as thread_ts: it is not a reply.
    expect(parseSlackMessage({ ...base, thread_ts: base.ts }, BOT)).toMatchObject({ kind: 'message', message: { threadTs: undefined } });
  });

  it('knows a direct message by its channel, and a bot or app by bot_id', () => {
    expect(parseSlackMessage({ ...base, channel: 'D0DIRECT12' }, BOT)).toMatchObject({ message: { direct: true } });
    expect(parseSlackMessage({ ...base, bot_id: 'B0123' }, BOT)).toMatchObject({ message: { fromBot: true } });
    expect(parseSlackMessage({ ...base, user: BOT }, BOT)).toMatchObject({ message: { fromBot: true } });
  });

  it('ignores edits, deletions, joins, empty and malformed messages, keeping where they were', () => {
    expect(parseSlackMessage({ ...base, subtype: 'message_changed' }, BOT)).toMatchObject({ kind: 'ignore', ts: base.ts });
    expect(parseSlackMessage({ ...base, subtype: 'channel_join' }, BOT)).toMatchObject({ kind: 'ignore' });
    expect(parseSlackMessage({ ...base, text: '  ' }, BOT)).toMatchObject({ kind: 'ignore', reason: 'an empty message' });
    expect(parseSlackMessage({ ...base, ts: 'not a ts' }, BOT)).toMatchObject({ kind: 'ignore' });
    expect(parseSlackMessage({ ...base, user: 'robert"); drop table' }, BOT)).toMatchObject({ kind: 'ignore' });
    expect(parseSlackMessage(null, BOT)).toMatchObject({ kind: 'ignore' });
    expect(parseSlackMessage({ ...base, channel: undefined }, BOT)).toMatchObject({ kind: 'ignore', reason: 'a message without a channel' });
    expect(parseSlackMessage({ ...base, channel: undefined }, BOT, 'C0FROMPAGE')).toMatchObject({ kind: 'message', message: { channel: 'C0FROMPAGE' } });
  });

  it('undoes Slack’s escapes and shows links as a person wrote them', () => {
    expect(fromSlackText('a &lt;b&gt; &amp;lt; c')).toBe('a <b> &lt; c');
    expect(fromSlackText('see <https://example.org|the site> or <https://example.com>, in <#C0123ABC|general>')).toBe('see the site (https://example.org) or https://example.com, in #general');
    expect(parseSlackMessage({ ...base, text: '', files: [{ name: 'photo.png' }] }, BOT)).toMatchObject({ message: { text: '[attachment: photo.png]' } });
  });
});
