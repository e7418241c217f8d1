import { describe, expect, it } from 'vitest';
import type { Turn } from '../session/transcript-record';
import { unanswered } from './recovery';

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
