import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../logger';
import { MatrixSyncState } from './sync-state';

describe('what the Matrix adapter keeps across restarts', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'homing-mx-state-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const open = () => MatrixSyncState.forAccount(dir, 'https://matrix.example.org', '@homing:example.org', silentLogger);

  it('keeps the device, the position, the events taken and the one in flight, in a private file', () => {
    const state = open();
    state.setIdentity('@homing:example.org', 'DEV1');
    state.advance('s10');
    state.done('$a');
    state.begin('$b');
    const again = open();
    expect({ device: again.deviceId, since: again.since, a: again.wasHandled('$a'), b: again.wasHandled('$b'), interrupted: again.interrupted }).toEqual({
      device: 'DEV1',
      since: 's10',
      a: true,
      b: false,
      interrupted: '$b',
    });
    const file = join(dir, 'matrix', readdirSync(join(dir, 'matrix'))[0]!);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    again.done('$b');
    expect(open().interrupted).toBeNull();
  });

  it('forgets the position when another user logs in on this account\'s file, and bounds what it remembers', () => {
    const state = open();
    state.setIdentity('@homing:example.org', 'DEV1');
    state.advance('s10');
    const file = join(dir, 'matrix', readdirSync(join(dir, 'matrix'))[0]!);
    const small = new MatrixSyncState(file, silentLogger, 3);
    for (const id of ['$e0', '$e1', '$e2', '$e3']) small.done(id);
    expect(['$e0', '$e1', '$e2', '$e3'].map((id) => small.wasHandled(id))).toEqual([false, true, true, true]);
    const reopened = new MatrixSyncState(file, silentLogger, 3);
    expect(['$e0', '$e3'].map((id) => reopened.wasHandled(id))).toEqual([false, true]);
    state.setIdentity('@other:example.org', 'DEV2');
    expect(open().since).toBeNull();
  });

  it('keeps a room\'s unread gap from before the position moves until it is read: its end moves with new syncs, its start page by page', () => {
    const state = open();
    state.setIdentity('@homing:example.org', 'DEV1');
    state.openGap('!a:x', 's10', '$last');
    state.advance('s20');
    expect(open().gaps).toEqual([{ roomId: '!a:x', from: 's10', until: '$last' }]);
    // A later sync of the same room only moves the end; the start stays where reading is.
    state.openGap('!a:x', 's20', '$newer');
    state.gapReadTo('!a:x', 'e15');
    state.openGap('!b:x', 's20', null);
    expect(open().gaps).toEqual([
      { roomId: '!a:x', from: 'e15', until: '$newer' },
      { roomId: '!b:x', from: 's20', until: null },
    ]);
    state.closeGap('!a:x');
    expect(open().gaps.map((gap) => gap.roomId)).toEqual(['!b:x']);
    expect(open().hasGap('!a:x')).toBe(false);
  });

  it('keeps the bot\'s own events and the threads it answered in across restarts, the latest 500 of each', () => {
    const state = open();
    state.setIdentity('@homing:example.org', 'DEV1');
    state.rememberOwnThread('$root');
    for (let i = 0; i < 501; i++) state.rememberOwnEvent(`$own${i}`);
    const again = open();
    expect(again.isOwnThread('$root')).toBe(true);
    expect([again.isOwnEvent('$own0'), again.isOwnEvent('$own1'), again.isOwnEvent('$own500')]).toEqual([false, true, true]);
    expect(again.isOwnThread('$other')).toBe(false);
  });

  it('reads a file written before gaps and own events were kept, without moving it aside', () => {
    open().advance('s5');
    const file = join(dir, 'matrix', readdirSync(join(dir, 'matrix'))[0]!);
    const { gaps: _gaps, ownEvents: _own, ownThreads: _threads, ...older } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify(older));
    const state = open();
    expect({ since: state.since, gaps: state.gaps, own: state.isOwnEvent('$x') }).toEqual({ since: 's5', gaps: [], own: false });
    expect(readdirSync(join(dir, 'matrix')).some((name) => name.includes('.unreadable-'))).toBe(false);
  });

  it('moves an unreadable file aside and starts afresh', () => {
    open().advance('s5');
    const file = join(dir, 'matrix', readdirSync(join(dir, 'matrix'))[0]!);
    writeFileSync(file, '{ broken');
    const state = open();
    expect(state.since).toBeNull();
    const aside = readdirSync(join(dir, 'matrix')).find((name) => name.includes('.unreadable-'));
    expect(aside).toBeDefined();
    expect(readFileSync(join(dir, 'matrix', aside!), 'utf8')).toBe('{ broken');
  });
});
