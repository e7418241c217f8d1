import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../logger';
import { RoomPositions } from './room-positions';

describe('room archive positions on disk', () => {
  const dirs: string[] = [];
  const scratch = () => {
    const dir = mkdtempSync(join(tmpdir(), 'homing-xmpp-positions-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('survives a restart, per account, readable by the user only', () => {
    const dir = scratch();
    RoomPositions.forAccount(dir, 'homing@example.org', silentLogger).set('lab@conference.example.org', { last: 'a1', at: 5 });
    expect(RoomPositions.forAccount(dir, 'Homing@Example.org', silentLogger).get('lab@conference.example.org')).toEqual({ last: 'a1', at: 5 });
    expect(RoomPositions.forAccount(dir, 'other@example.org', silentLogger).get('lab@conference.example.org')).toBeUndefined();
    const [file] = readdirSync(join(dir, 'xmpp'));
    expect(statSync(join(dir, 'xmpp', file!)).mode & 0o777).toBe(0o600);
  });

  it('moves an unreadable file aside and says so, starting with no positions', () => {
    const dir = scratch();
    const positions = RoomPositions.forAccount(dir, 'homing@example.org', silentLogger);
    positions.set('lab@conference.example.org', { at: 1 });
    const [file] = readdirSync(join(dir, 'xmpp'));
    writeFileSync(join(dir, 'xmpp', file!), '{"v":1,"rooms":{"lab@conference.example.org":{"at":-4}}}');
    const logger = { ...silentLogger, error: vi.fn() };
    expect(RoomPositions.forAccount(dir, 'homing@example.org', logger).get('lab@conference.example.org')).toBeUndefined();
    expect(logger.error).toHaveBeenCalledOnce();
    expect(readdirSync(join(dir, 'xmpp')).some((name) => name.includes('.unreadable-'))).toBe(true);
    expect(readFileSync(join(dir, 'xmpp', readdirSync(join(dir, 'xmpp')).find((name) => name.includes('.unreadable-'))!), 'utf8')).toContain('-4');
  });
});
