import type { IrcMessageEvent } from 'irc-framework';
import { describe, expect, it } from 'vitest';
import { decideInbound, type InboundContext } from './inbound';

const context: InboundContext = {
  ownNicks: ['homing'],
  isChannel: (target) => target.startsWith('#'),
  isSelf: (nick) => nick.toLowerCase() === 'homing',
  isAllowed: (nick) => (nick.toLowerCase() === 'alice' ? 'allowed' : nick.toLowerCase() === 'ada' ? 'ask-account' : 'refused'),
  messageRef: () => 'ref-1',
};

function event(fields: Partial<IrcMessageEvent>): IrcMessageEvent {
  return { nick: 'alice', ident: 'a', hostname: 'h', target: 'homing', message: 'hi', tags: {}, from_server: false, ...fields };
}

describe('decideInbound', () => {
  it('takes every direct message from an allowed sender', () => {
    expect(decideInbound('privmsg', event({ message: 'hello' }), context)).toEqual({
      kind: 'message',
      message: {
        source: { platform: 'irc', chatId: 'alice', chatType: 'direct', senderId: 'alice', senderName: 'alice', messageId: 'ref-1' },
        text: 'hello',
        messageRef: 'ref-1',
      },
    });
  });

  it('takes channel lines only when addressed to us, without the prefix', () => {
    expect(decideInbound('privmsg', event({ target: '#c', message: 'chatter' }), context)).toEqual({ kind: 'ignore' });
    const decision = decideInbound('privmsg', event({ target: '#c', message: 'homing: do it' }), context);
    expect(decision).toMatchObject({ kind: 'message', message: { text: 'do it', source: { chatId: '#c', chatType: 'group', chatName: '#c' } } });
  });

  it('ignores our own lines, server lines and empty addressed lines', () => {
    expect(decideInbound('privmsg', event({ nick: 'Homing' }), context)).toEqual({ kind: 'ignore' });
    expect(decideInbound('privmsg', event({ from_server: true }), context)).toEqual({ kind: 'ignore' });
    expect(decideInbound('privmsg', event({ target: '#c', message: 'homing:   ' }), context)).toEqual({ kind: 'ignore' });
  });

  it('refuses a sender who is not allowed only when they speak to us', () => {
    expect(decideInbound('privmsg', event({ nick: 'mallory' }), context)).toEqual({ kind: 'refuse', nick: 'mallory' });
    expect(decideInbound('privmsg', event({ nick: 'mallory', target: '#c', message: 'chatter' }), context)).toEqual({ kind: 'ignore' });
  });

  it('asks for the account of a sender only an account can admit, with the message it would pass on', () => {
    expect(decideInbound('privmsg', event({ nick: 'ada', message: 'hello' }), context)).toMatchObject({
      kind: 'ask-account',
      nick: 'ada',
      message: { text: 'hello', source: { chatId: 'ada', senderId: 'ada' } },
    });
  });

  it('passes an ACTION as the log line it is; in a channel only when it names us', () => {
    expect(decideInbound('action', event({ message: 'waves' }), context)).toMatchObject({ message: { text: '* alice waves' } });
    expect(decideInbound('action', event({ target: '#c', message: 'waves' }), context)).toEqual({ kind: 'ignore' });
    expect(decideInbound('action', event({ target: '#c', message: 'pokes homing' }), context)).toMatchObject({ kind: 'message' });
  });
});
