import { xml } from '@xmpp/client';
import { describe, expect, it } from 'vitest';
import { addressedText, decideMessage, isRoomHistory, parseAddress, roomStanzaId, type InboundContext } from './inbound';

const ROOM = 'lab@conference.example.org';
const context: InboundContext = {
  self: 'homing@example.org',
  roomNick: (room) => (room === ROOM ? 'homing' : undefined),
  everyMessage: () => false,
  isOwnId: (id) => id === 'homing-ours',
};

const message = (attrs: Record<string, string>, ...children: ReturnType<typeof xml>[]) => xml('message', attrs, ...children);
const body = (text: string) => xml('body', {}, text);

describe('XMPP inbound messages', () => {
  it('takes a one-to-one chat message by bare JID, with its id and whether it was stored offline', () => {
    expect(decideMessage(message({ from: 'Alice@Example.org/phone', type: 'chat', id: 'm1' }, body('hi')), context)).toEqual({
      kind: 'direct',
      from: 'alice@example.org',
      resource: 'phone',
      text: 'hi',
      id: 'm1',
      delayed: false,
    });
    const stored = decideMessage(message({ from: 'alice@example.org/phone', id: 'm2' }, body('later'), xml('delay', { xmlns: 'urn:xmpp:delay', stamp: '2026-01-01T00:00:00Z' })), context);
    expect(stored).toMatchObject({ kind: 'direct', delayed: true });
  });

  it('prefers the origin-id over the stanza id', () => {
    const decided = decideMessage(message({ from: 'alice@example.org/x', type: 'chat', id: 'stanza' }, body('hi'), xml('origin-id', { xmlns: 'urn:xmpp:sid:0', id: 'origin' })), context);
    expect(decided).toMatchObject({ id: 'origin' });
  });

  it('ignores chat states, own messages, servers, headlines and private messages through a room', () => {
    const ignore = (stanza: ReturnType<typeof xml>) => expect(decideMessage(stanza, context).kind).toBe('ignore');
    ignore(message({ from: 'alice@example.org/x', type: 'chat' }, xml('composing', { xmlns: 'http://jabber.org/protocol/chatstates' })));
    ignore(message({ from: 'homing@example.org/other', type: 'chat' }, body('carbon of my own')));
    ignore(message({ from: 'example.org', type: 'chat' }, body('server notice')));
    ignore(message({ from: 'alice@example.org/x', type: 'headline' }, body('news')));
    ignore(message({ from: `${ROOM}/bob`, type: 'chat' }, body('private through the room')));
    ignore(message({ type: 'chat' }, body('no sender')));
    ignore(message({ from: 'not a jid/x', type: 'chat' }, body('junk')));
  });

  it('in a room takes only messages addressed by nick, without the address, and never its own reflection or history', () => {
    expect(decideMessage(message({ from: `${ROOM}/bob`, type: 'groupchat', id: 'g1' }, body('homing: what time is it?')), context)).toEqual({
      kind: 'room',
      room: ROOM,
      nick: 'bob',
      text: 'what time is it?',
      id: 'g1',
      delayed: false,
    });
    expect(decideMessage(message({ from: `${ROOM}/bob`, type: 'groupchat' }, body('just chatting')), context).kind).toBe('ignore');
    const reflected = message({ from: `${ROOM}/homing_`, type: 'groupchat', id: 'x' }, body('homing: a reply'), xml('origin-id', { xmlns: 'urn:xmpp:sid:0', id: 'homing-ours' }));
    expect(decideMessage(reflected, context)).toEqual({ kind: 'ignore', why: 'our own message reflected' });
    expect(decideMessage(message({ from: `${ROOM}/homing`, type: 'groupchat' }, body('homing: me')), context).kind).toBe('ignore');
    const history = message({ from: `${ROOM}/bob`, type: 'groupchat' }, body('homing: old'), xml('delay', { xmlns: 'urn:xmpp:delay', stamp: 'x' }));
    expect(decideMessage(history, context).kind).toBe('ignore');
    const roomHistory = message({ from: `${ROOM}/bob`, type: 'groupchat' }, body('homing: old'), xml('delay', { xmlns: 'urn:xmpp:delay', from: ROOM, stamp: 'x' }));
    expect(decideMessage(roomHistory, context)).toEqual({ kind: 'ignore', why: 'room history' });
    expect(decideMessage(message({ from: 'other@conference.example.org/bob', type: 'groupchat' }, body('homing: hi')), context).kind).toBe('ignore');
    const every = { ...context, everyMessage: () => true };
    expect(decideMessage(message({ from: `${ROOM}/bob`, type: 'groupchat' }, body('just chatting')), every)).toMatchObject({ kind: 'room', text: 'just chatting' });
  });

  it('hands an error for one of our messages back with its condition', () => {
    const error = message(
      { from: 'nobody@example.org', type: 'error', id: 'homing-1' },
      xml('error', { type: 'cancel' }, xml('service-unavailable', { xmlns: 'urn:ietf:params:xml:ns:xmpp-stanzas' }), xml('text', { xmlns: 'urn:ietf:params:xml:ns:xmpp-stanzas' }, 'gone')),
    );
    expect(decideMessage(error, context)).toEqual({ kind: 'error', id: 'homing-1', from: 'nobody@example.org', condition: 'service-unavailable', type: 'cancel', text: 'gone' });
  });

  it('cuts a huge body', () => {
    const decided = decideMessage(message({ from: 'alice@example.org/x', type: 'chat' }, body('x'.repeat(100_000))), context);
    expect(decided.kind === 'direct' && decided.text.length).toBeLessThan(33_000);
  });

  it('knows when a room message is addressed to the nick', () => {
    expect(addressedText('homing: hi', 'homing')).toBe('hi');
    expect(addressedText('Homing, hi', 'homing')).toBe('hi');
    expect(addressedText('@homing hi', 'homing')).toBe('hi');
    expect(addressedText('homingbird is a bird', 'homing')).toBeUndefined();
    expect(addressedText('hi homing', 'homing')).toBeUndefined();
    expect(addressedText('homing', 'homing')).toBeUndefined();
  });

  it('parses addresses leniently but refuses junk', () => {
    expect(parseAddress('Room@Conf.example.org/Nick With Space')).toEqual({ bare: 'room@conf.example.org', resource: 'Nick With Space' });
    expect(parseAddress('example.org')).toEqual({ bare: 'example.org', resource: '' });
    expect(parseAddress('a@b@c')).toBeUndefined();
    expect(parseAddress(undefined)).toBeUndefined();
    expect(parseAddress('x'.repeat(4000))).toBeUndefined();
  });

  it('takes a room message re-sent on a stream-management resume (delay stamped by our own server), and tells it was handed again', () => {
    // prosody mod_smacks outgoing_stanza_filter: from = the session's bare JID (or the host).
    for (const stampedBy of ['homing@example.org', 'example.org']) {
      const resent = message({ from: `${ROOM}/bob`, type: 'groupchat', id: 'g9' }, body('homing: during the blip'), xml('delay', { xmlns: 'urn:xmpp:delay', from: stampedBy, stamp: '2026-01-01T00:00:00Z' }));
      expect(decideMessage(resent, context)).toEqual({ kind: 'room', room: ROOM, nick: 'bob', text: 'during the blip', id: 'g9', delayed: true });
    }
    // A delay from an occupant of the room (room/nick) is not the room's history stamp either.
    const byOccupant = message({ from: `${ROOM}/bob`, type: 'groupchat' }, body('homing: hi'), xml('delay', { xmlns: 'urn:xmpp:delay', from: `${ROOM}/bob`, stamp: 'x' }));
    expect(decideMessage(byOccupant, context).kind).toBe('room');
  });

  it('reads the stanza-id the room gave a message, and no other', () => {
    const sid = (by: string, id: string) => xml('stanza-id', { xmlns: 'urn:xmpp:sid:0', by, id });
    expect(roomStanzaId(message({ from: `${ROOM}/bob` }, sid('bob@example.org', 'forged'), sid(ROOM, 'a1')), ROOM)).toBe('a1');
    expect(roomStanzaId(message({ from: `${ROOM}/bob` }, sid('example.org', 'server')), ROOM)).toBeUndefined();
    expect(roomStanzaId(message({ from: `${ROOM}/bob` }, sid(ROOM, 'x'.repeat(201))), ROOM)).toBeUndefined();
    expect(isRoomHistory(message({}, xml('delay', { xmlns: 'urn:xmpp:delay', from: 'LAB@conference.example.org', stamp: 'x' })), ROOM)).toBe(true);
  });
});
