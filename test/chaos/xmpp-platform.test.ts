import { describe, expect, it } from 'vitest';
import type { ReceivedMessage } from '../support/xmpp-user';
import { asShown, timesWritten } from './xmpp-platform';

/** What the XMPP chaos run counts of a person's messages (no servers: hand-made messages). */

const SERVER = 'localhost';
const BOT = 'homing@localhost/homing';

const message = (id: string, body: string, delayFrom?: string): ReceivedMessage => ({
  at: 0,
  from: BOT,
  type: 'chat',
  body,
  id,
  originId: id,
  chatState: undefined,
  delayFrom,
});

/** What the relay saw the gateway write: each `[id, body]` once per time it appears. */
const writes = (...stanzas: [string, string][]) => timesWritten(stanzas.map(([id, body]) => ({ id, body })));

describe("the XMPP chaos run's view of a person's messages", () => {
  it("drops the server's second copy of a message the person already had (redelivered from the offline store after a restart)", () => {
    const first = message('a1', 'req-0017 line 1/1 ans');
    const again = message('a1', 'req-0017 line 1/1 ans', SERVER);
    expect(asShown([first, again], writes(['a1', 'req-0017 line 1/1 ans']), SERVER)).toEqual([first]);
  });

  it('keeps every copy the gateway itself wrote, delayed or not: a repeat by Homing is still counted', () => {
    const first = message('a1', 'req-0017 line 1/1 ans');
    const resent = message('a1', 'req-0017 line 1/1 ans', SERVER);
    const stanza: [string, string] = ['a1', 'req-0017 line 1/1 ans'];
    expect(asShown([first, resent], writes(stanza, stanza), SERVER)).toEqual([first, resent]);
  });

  it('keeps an undelayed second copy, and a delayed one that is the only copy (the person was away)', () => {
    const twice = [message('a1', 'req-0001 line 1/1 ans'), message('a1', 'req-0001 line 1/1 ans')];
    expect(asShown(twice, writes(['a1', 'req-0001 line 1/1 ans']), SERVER)).toEqual(twice);
    const stored = [message('b2', 'req-0002 line 1/1 ans', SERVER)];
    expect(asShown(stored, writes(['b2', 'req-0002 line 1/1 ans']), SERVER)).toEqual(stored);
  });

  it('keeps a delayed copy stamped by anyone but the server (a room history), and a copy with another body', () => {
    const first = message('a1', 'req-0003 line 1/1 ans');
    const fromRoom = message('a1', 'req-0003 line 1/1 ans', 'chaos@conference.localhost');
    const marked = message('a1', 'req-0003 line 1/1 ans (sent again)', SERVER);
    const written = writes(['a1', 'req-0003 line 1/1 ans'], ['a1', 'req-0003 line 1/1 ans (sent again)']);
    expect(asShown([first, fromRoom, marked], written, SERVER)).toEqual([first, fromRoom, marked]);
  });
});
