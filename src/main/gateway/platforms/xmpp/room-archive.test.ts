import { xml } from '@xmpp/client';
import { describe, expect, it } from 'vitest';
import { archiveQuery, keepsArchive, readArchived, readFin } from './room-archive';

const ROOM = 'lab@conference.example.org';

/** A result as prosody's mod_muc_mam sends it (iq-set/bare/urn:xmpp:mam:2:query). */
function result(attrs: { from?: string; queryid?: string; id?: string }, stamp = '2026-01-02T03:04:05Z') {
  return xml(
    'message',
    { from: attrs.from ?? ROOM, to: 'homing@example.org/homing' },
    xml(
      'result',
      { xmlns: 'urn:xmpp:mam:2', queryid: attrs.queryid ?? 'q1', id: attrs.id ?? 'a1' },
      xml(
        'forwarded',
        { xmlns: 'urn:xmpp:forward:0' },
        xml('delay', { xmlns: 'urn:xmpp:delay', stamp }),
        xml('message', { xmlns: 'jabber:client', type: 'groupchat', from: `${ROOM}/bob`, id: 'b1' }, xml('body', {}, 'homing: hi')),
      ),
    ),
  );
}

describe('reading a room\u2019s archive (XEP-0313)', () => {
  it('asks for a page after a stanza-id, since a time, or only the newest message', () => {
    const after = archiveQuery(xml, ROOM, 'q1', { kind: 'after', id: 'a9' });
    expect(after.attrs).toMatchObject({ type: 'set', to: ROOM });
    const query = after.getChild('query', 'urn:xmpp:mam:2')!;
    expect(query.attrs.queryid).toBe('q1');
    const set = query.getChild('set', 'http://jabber.org/protocol/rsm')!;
    expect(set.getChildText('max')).toBe('50');
    expect(set.getChildText('after')).toBe('a9');
    const since = archiveQuery(xml, ROOM, 'q2', { kind: 'since', at: Date.UTC(2026, 0, 2) }).getChild('query', 'urn:xmpp:mam:2')!;
    const start = since.getChild('x', 'jabber:x:data')!.getChildren('field').find((field) => field.attrs.var === 'start');
    expect(start?.getChildText('value')).toBe('2026-01-02T00:00:00.000Z');
    const newest = archiveQuery(xml, ROOM, 'q3', { kind: 'newest' }).getChild('query', 'urn:xmpp:mam:2')!.getChild('set', 'http://jabber.org/protocol/rsm')!;
    expect(newest.getChildText('max')).toBe('1');
    expect(newest.getChild('before')).toBeDefined();
  });

  it('takes a result of our query from the room, with its id and stamp, and nothing else', () => {
    const item = readArchived(result({}), ROOM, 'q1');
    expect(item).toMatchObject({ id: 'a1', at: Date.UTC(2026, 0, 2, 3, 4, 5) });
    expect(item?.message.getChildText('body')).toBe('homing: hi');
    expect(readArchived(result({ queryid: 'other' }), ROOM, 'q1')).toBeUndefined();
    expect(readArchived(result({ from: 'mallory@example.org' }), ROOM, 'q1')).toBeUndefined();
    expect(readArchived(result({ from: `${ROOM}/bob` }), ROOM, 'q1')).toBeUndefined();
    expect(readArchived(result({ id: 'x'.repeat(201) }), ROOM, 'q1')).toBeUndefined();
    expect(readArchived(result({}, 'not a time'), ROOM, 'q1')?.at).toBeUndefined();
  });

  it('reads the end of a page: complete, and where the next page starts', () => {
    const fin = (complete: string | undefined, last?: string) =>
      xml('iq', { type: 'result' }, xml('fin', { xmlns: 'urn:xmpp:mam:2', complete }, xml('set', { xmlns: 'http://jabber.org/protocol/rsm' }, ...(last ? [xml('last', {}, last)] : []))));
    expect(readFin(fin('true', 'a50'))).toEqual({ complete: true, last: 'a50' });
    // prosody leaves complete out on a page that is not the last.
    expect(readFin(fin(undefined, 'a50'))).toEqual({ complete: false, last: 'a50' });
    expect(readFin(xml('iq', { type: 'result' }))).toEqual({ complete: false, last: undefined });
  });

  it('knows a room keeps an archive from its disco#info features', () => {
    const info = (...features: string[]) => xml('iq', { type: 'result' }, xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' }, ...features.map((name) => xml('feature', { var: name }))));
    expect(keepsArchive(info('urn:xmpp:mam:2', 'urn:xmpp:sid:0'))).toBe(true);
    expect(keepsArchive(info('urn:xmpp:sid:0', 'muc_open'))).toBe(false);
    expect(keepsArchive(xml('iq', { type: 'result' }))).toBe(false);
  });
});
