import { describe, expect, it } from 'vitest';
import { parseSync, readMessage, stripReplyFallback } from './inbound';

const BOT = '@homing:example.org';
const ROOM = '!room:example.org';

describe('Matrix sync answers and messages as the adapter reads them', () => {
  it('reads rooms, invites (with is_direct and encryption), leaves and m.direct; drops what it cannot read', () => {
    const parsed = parseSync(
      {
        next_batch: 's42',
        rooms: {
          join: {
            [ROOM]: { timeline: { events: [{ event_id: '$a', type: 'm.room.message', sender: '@alice:example.org', content: { body: 'hi' } }, 'junk', { type: 7 }], limited: true, prev_batch: 's40' } },
            'not-a-room': { timeline: { events: [] } },
            '!broken:example.org': { timeline: 'nope' },
          },
          invite: {
            '!dm:example.org': {
              invite_state: {
                events: [
                  { type: 'm.room.member', state_key: BOT, sender: '@alice:example.org', content: { membership: 'invite', is_direct: true } },
                  { type: 'm.room.encryption', state_key: '', sender: '@alice:example.org', content: {} },
                  { type: 'm.room.name', state_key: '', sender: '@alice:example.org', content: { name: 'Secret\u0000 plans' } },
                ],
              },
            },
          },
          leave: { '!gone:example.org': {} },
        },
        account_data: { events: [{ type: 'm.direct', content: { '@alice:example.org': ['!dm:example.org', 'junk', 5] } }] },
      },
      BOT,
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const { batch } = parsed;
    expect(batch.nextBatch).toBe('s42');
    expect(batch.joined).toEqual([{ roomId: ROOM, state: [], timeline: [expect.objectContaining({ event_id: '$a' })], limited: true, prevBatch: 's40' }]);
    expect(batch.invites).toEqual([{ roomId: '!dm:example.org', inviter: '@alice:example.org', isDirect: true, encrypted: true, name: 'Secret  plans' }]);
    expect(batch.left).toEqual(['!gone:example.org']);
    expect([...batch.direct!]).toEqual([['@alice:example.org', ['!dm:example.org']]]);
    expect(parseSync({ rooms: {} }, BOT)).toEqual({ ok: false, error: 'the sync answer is not one Homing can read' });
    expect(parseSync('<html>', BOT).ok).toBe(false);
  });

  it('reads threads, replies (without Element\'s quote), edits, media and notices', () => {
    const event = (content: Record<string, unknown>) => ({ type: 'm.room.message', event_id: '$e', sender: '@alice:example.org', content });
    expect(readMessage(event({ msgtype: 'm.text', body: 'in thread', 'm.relates_to': { rel_type: 'm.thread', event_id: '$root', is_falling_back: true, 'm.in_reply_to': { event_id: '$last' } } }))).toMatchObject({
      kind: 'message',
      text: 'in thread',
      threadRoot: '$root',
      inReplyTo: undefined,
    });
    expect(readMessage(event({ msgtype: 'm.text', body: '> <@homing:example.org> You said: hi\n> more\n\nand this', 'm.relates_to': { 'm.in_reply_to': { event_id: '$bot' } } }))).toMatchObject({
      kind: 'message',
      text: 'and this',
      inReplyTo: '$bot',
    });
    expect(readMessage(event({ msgtype: 'm.text', body: '* fixed', 'm.new_content': { msgtype: 'm.text', body: 'fixed' }, 'm.relates_to': { rel_type: 'm.replace', event_id: '$orig' } }))).toEqual({ kind: 'edit', target: '$orig', text: 'fixed' });
    expect(readMessage(event({ msgtype: 'm.image', body: 'cat.png', url: 'mxc://x/y' }))).toMatchObject({ kind: 'message', text: '[photo: cat.png]', media: [{ kind: 'image', source: 'mxc://x/y', name: 'cat.png' }] });
    expect(readMessage(event({ msgtype: 'm.text', body: 'plain' }))).toMatchObject({ media: [] });
    expect(readMessage(event({ msgtype: 'm.emote', body: 'waves' }))).toMatchObject({ text: '* waves' });
    expect(readMessage(event({ msgtype: 'm.notice', body: 'another bot' }))).toEqual({ kind: 'ignore', reason: 'a notice' });
    expect(readMessage(event({ msgtype: 'm.text', body: '   ' }))).toMatchObject({ kind: 'ignore' });
    expect(readMessage(event({ msgtype: 'm.text', body: 'x'.repeat(100_000) }))).toMatchObject({ kind: 'message', text: expect.stringMatching(/ \[…\]$/) });
    expect(readMessage(event({ msgtype: 'm.text', body: 'hey', 'm.mentions': { user_ids: [BOT, 5] } }))).toMatchObject({ mentions: [BOT] });
  });

  it('strips a reply fallback only when there is a quote and something after it', () => {
    expect(stripReplyFallback('> <@a:x> quoted\n\nreply')).toBe('reply');
    expect(stripReplyFallback('no quote')).toBe('no quote');
    expect(stripReplyFallback('> only a quote')).toBe('> only a quote');
  });
});
