import { xml, type Element } from '@xmpp/client';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../logger';
import { RoomPositions } from './room-positions';
import { RoomStay, type Place } from './room-stay';
import { waitUntil } from '../../../../../test/support/wait';

const ROOM = 'lab@conference.example.org';

/**
 * A room as prosody's mod_muc_mam answers it (mod_muc_mam.lua, iq-set query):
 * results as messages before the iq answer, pages of at most `max`, `complete`
 * on the last one, `item-not-found` for an `after` it does not know; disco#info
 * lists urn:xmpp:mam:2 when it archives.
 */
function fakeRoom(options: { archive: string[]; keepsArchive?: boolean; failOnce?: number }) {
  const asked: string[] = [];
  let calls = 0;
  const stays: RoomStay[] = [];
  const request = async (iq: Element): Promise<Element> => {
    const query = iq.getChild('query');
    if (query?.attrs.xmlns === 'http://jabber.org/protocol/disco#info') {
      return xml('iq', { type: 'result' }, xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' }, ...(options.keepsArchive === false ? [] : [xml('feature', { var: 'urn:xmpp:mam:2' })])));
    }
    calls++;
    if (calls === options.failOnce) throw Object.assign(new Error('internal-server-error'), { condition: 'internal-server-error' });
    const set = query!.getChild('set', 'http://jabber.org/protocol/rsm')!;
    const after = set.getChildText('after');
    asked.push(after ?? (set.getChild('before') ? 'newest' : 'start'));
    let from = 0;
    if (after !== null) {
      const at = options.archive.indexOf(after);
      if (at < 0) throw Object.assign(new Error('item-not-found'), { condition: 'item-not-found' });
      from = at + 1;
    }
    const max = Number(set.getChildText('max'));
    const page = set.getChild('before') ? options.archive.slice(-1) : options.archive.slice(from, from + max);
    for (const id of page) {
      stays.at(-1)!.onArchived(
        xml('message', { from: ROOM }, xml('result', { xmlns: 'urn:xmpp:mam:2', queryid: query!.attrs.queryid, id }, xml('forwarded', { xmlns: 'urn:xmpp:forward:0' }, xml('message', { type: 'groupchat', from: `${ROOM}/bob` }, xml('body', {}, id))))),
      );
    }
    const complete = set.getChild('before') !== undefined || from + max >= options.archive.length;
    return xml('iq', { type: 'result' }, xml('fin', { xmlns: 'urn:xmpp:mam:2', ...(complete ? { complete: 'true' } : {}) }, xml('set', { xmlns: 'http://jabber.org/protocol/rsm' }, ...(page.length ? [xml('last', {}, page.at(-1)!)] : []))));
  };
  const taken: string[] = [];
  const gaps: string[] = [];
  const positions = new RoomPositions(undefined, silentLogger);
  const stay = () => {
    const next = new RoomStay(ROOM, {
      positions,
      logger: silentLogger,
      clock: { now: () => 1_000_000, monotonic: () => 0 },
      xml,
      request,
      take: (message: Element, place: Place) => {
        taken.push(message.getChildText('body')!);
        place();
      },
      gap: (text) => gaps.push(text),
      retryDelay: () => 1,
    });
    stays.push(next);
    next.begin();
    return next;
  };
  return { asked, taken, gaps, positions, stay };
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `m${i}`);

describe('a stay in a room reads its archive', () => {
  it('page by page after the saved position to the end, and moves the position to the last message taken', async () => {
    const room = fakeRoom({ archive: ids(120) });
    room.positions.set(ROOM, { last: 'm9', at: 5 });
    room.stay();
    await waitUntil('read to the end', () => room.taken.length === 110);
    expect(room.taken).toEqual(ids(120).slice(10));
    expect(room.asked).toEqual(['m9', 'm59', 'm109']);
    expect(room.positions.get(ROOM)?.last).toBe('m119');
    expect(room.gaps).toEqual([]);
  });

  it('tries a failed page again from where it stopped: nothing skipped, nothing twice', async () => {
    const room = fakeRoom({ archive: ids(120), failOnce: 2 });
    room.positions.set(ROOM, { last: 'm9', at: 5 });
    room.stay();
    await waitUntil('read to the end', () => room.taken.length === 110);
    expect(room.taken).toEqual(ids(120).slice(10));
    expect(room.asked).toEqual(['m9', 'm59', 'm109']);
  });

  it('starts a first stay at the newest message without taking it', async () => {
    const room = fakeRoom({ archive: ids(3) });
    room.stay();
    await waitUntil('the position set', () => room.positions.get(ROOM)?.last === 'm2');
    expect(room.taken).toEqual([]);
    expect(room.asked).toEqual(['newest']);
  });

  it('starts the first stay this process began at the newest message, and a rejoin after it reads on from there', async () => {
    const room = fakeRoom({ archive: ids(3) });
    room.positions.begin(ROOM, 5);
    room.stay();
    await waitUntil('the position set', () => room.positions.get(ROOM)?.last === 'm2');
    expect(room.taken).toEqual([]);
    expect(room.positions.begunByThisProcess(ROOM)).toBe(false);
    room.stay();
    await waitUntil('the rejoin read', () => room.asked.length === 2);
    expect(room.asked).toEqual(['newest', 'm2']);
  });

  it('reads what was said since the join of a first stay that a stopped process began before the archive answered', async () => {
    const room = fakeRoom({ archive: ids(3) });
    // Written before the join went out; the process stopped before it read the archive.
    room.positions.set(ROOM, { at: 5, begun: true });
    room.stay();
    await waitUntil('read', () => room.taken.length === 3);
    expect(room.asked).toEqual(['start']);
    expect(room.positions.get(ROOM)).toEqual({ last: 'm2', at: expect.any(Number) });
  });

  it('when the archive no longer knows the position, says so once and reads by time', async () => {
    const room = fakeRoom({ archive: ids(3) });
    room.positions.set(ROOM, { last: 'gone', at: 5 });
    room.stay();
    await waitUntil('read', () => room.taken.length === 3);
    expect(room.gaps).toHaveLength(1);
    expect(room.gaps[0]).toMatch(/no longer has the last message Homing read/);
    expect(room.asked).toEqual(['gone', 'start']);
  });

  it('in a room without an archive says nothing at the first stay and once at each later one', async () => {
    const room = fakeRoom({ archive: [], keepsArchive: false });
    room.stay();
    await waitUntil('the first stay noted', () => room.positions.get(ROOM) !== undefined);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(room.gaps).toEqual([]);
    room.stay();
    await waitUntil('the gap told', () => room.gaps.length === 1);
    expect(room.gaps[0]).toBe(`${ROOM} keeps no archive: messages sent there while Homing was away are lost.`);
  });
});
