import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../logger';
import { ChannelPositions, compareSnowflakes, SINCE_MARGIN_MS, snowflakeAt } from './channel-positions';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'homing-dc-pos-'));
  dirs.push(dir);
  return dir;
}

const T = Date.UTC(2026, 0, 1);

describe('the Discord channel positions', () => {
  it('moves forward only, survives a restart, and keeps when Homing began listening', () => {
    const dir = dataDir();
    const positions = ChannelPositions.forBot(dir, '42', silentLogger, T);
    const a = snowflakeAt(T + 1_000);
    const b = snowflakeAt(T + 2_000);
    positions.advance('100000000000000001', b);
    positions.advance('100000000000000001', a);
    expect(positions.last('100000000000000001')).toBe(b);
    expect(positions.seen('100000000000000001', a)).toBe(true);
    const again = ChannelPositions.forBot(dir, '42', silentLogger, T + 99_000);
    expect(again.last('100000000000000001')).toBe(b);
    expect(again.since).toBe(snowflakeAt(T - SINCE_MARGIN_MS));
    expect(statSync(join(dir, 'discord', 'bot-42.json')).mode & 0o777).toBe(0o600);
  });

  it('starts a channel it never saw from a little before Homing began listening: older messages count as seen, newer not', () => {
    const positions = ChannelPositions.forBot(dataDir(), '42', silentLogger, T);
    expect(positions.has('100000000000000002')).toBe(false);
    expect(positions.seen('100000000000000002', snowflakeAt(T - SINCE_MARGIN_MS - 1))).toBe(true);
    // A message written just before the connection was read (or by a clock a little behind) is not lost.
    expect(positions.seen('100000000000000002', snowflakeAt(T - 1_000))).toBe(false);
  });

  it('forgets a channel the bot can no longer read, across a restart', () => {
    const dir = dataDir();
    const positions = ChannelPositions.forBot(dir, '42', silentLogger, T);
    positions.advance('100000000000000003', snowflakeAt(T + 1_000));
    positions.advance('100000000000000004', snowflakeAt(T + 2_000));
    positions.forget('100000000000000003');
    expect(positions.has('100000000000000003')).toBe(false);
    expect(ChannelPositions.forBot(dir, '42', silentLogger, T).known()).toEqual(['100000000000000004']);
  });

  it('moves an unreadable file aside instead of failing', () => {
    const dir = dataDir();
    ChannelPositions.forBot(dir, '42', silentLogger, T);
    writeFileSync(join(dir, 'discord', 'bot-42.json'), '{not json');
    const positions = ChannelPositions.forBot(dir, '42', silentLogger, T + 5);
    expect(positions.since).toBe(snowflakeAt(T + 5 - SINCE_MARGIN_MS));
    expect(JSON.parse(readFileSync(join(dir, 'discord', 'bot-42.json'), 'utf8'))).toMatchObject({ v: 1, channels: {} });
  });

  it('compares snowflakes as numbers', () => {
    expect(compareSnowflakes('9', '10')).toBeLessThan(0);
    expect(compareSnowflakes('1100000000000000002', '1100000000000000001')).toBeGreaterThan(0);
    expect(compareSnowflakes('5', '5')).toBe(0);
  });
});
