import { describe, expect, it } from 'vitest';
import type { Turn } from '../session/transcript-record';
import { LOST_REPLY_WINDOW_MS, unanswered, withoutLostReplies } from './recovery';

const user = (ref: string | undefined, at: number): Turn => ({ type: 'user', at, ...(ref ? { messageRef: ref } : {}), sender: { id: 'user_1' }, text: `ask ${ref ?? at}` });
const reply = (replyTo: string | undefined, at: number): Turn => ({ type: 'assistant', at, obligationId: `o${at}`, ...(replyTo ? { replyTo } : {}), text: `answer ${replyTo ?? at}` });

describe('which saved messages got no reply', () => {
  it('finds every unanswered message, not only the last one, oldest first (messages are saved on arrival, before earlier ones are answered)', () => {
    const turns = [user('a', 1), user('b', 2), user('c', 3), reply('a', 4), user('d', 5), reply('c', 6)];
    expect(unanswered(turns).map((turn) => turn.type === 'user' && turn.messageRef)).toEqual(['b', 'd']);
  });

  it('takes a reply without a message ref (an older Homing) as answering everything before it', () => {
    const turns = [user('a', 1), user(undefined, 2), reply(undefined, 3), user('b', 4)];
    expect(unanswered(turns).map((turn) => turn.type === 'user' && (turn.messageRef ?? turn.at))).toEqual(['b']);
  });

  it('finds nothing when every message has its reply', () => {
    expect(unanswered([user('a', 1), reply('a', 2), user('b', 3), reply('b', 4)])).toEqual([]);
  });
});

describe('after a power cut', () => {
  it('takes a recent reply whose record the ledger lost for no reply, and keeps older ones and recorded ones', () => {
    const now = 10 * LOST_REPLY_WINDOW_MS;
    const old = now - LOST_REPLY_WINDOW_MS - 1;
    // o<old>: pruned long ago (only recent lines are checked); o<now-2>: recorded; o<now>: lost with the cut.
    const turns = [user('a', old - 1), reply('a', old), user('b', now - 3), reply('b', now - 2), user('c', now - 1), reply('c', now)];
    const recorded = new Set([`o${now - 2}`]);
    const asked: string[] = [];
    const ledger = {
      getDelivery: (id: string) => {
        asked.push(id);
        return recorded.has(id) ? ({ id } as never) : undefined;
      },
    };
    expect(unanswered(withoutLostReplies(turns, ledger)).map((turn) => turn.type === 'user' && turn.messageRef)).toEqual(['c']);
    expect(asked).toEqual([`o${now - 2}`, `o${now}`]);
  });
});
