import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../logger';
import { compareTs, conversationKey, ConversationPositions, parseConversationKey, SINCE_MARGIN_MS, tsAt } from './conversation-positions';
import { tsBefore } from './slack-adapter';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'homing-slack-positions-'));
  dirs.push(dir);
  return dir;
};

describe('Slack timestamps', () => {
  it('order by seconds, then the fraction', () => {
    expect(compareTs('1712345678.000100', '1712345678.000099')).toBeGreaterThan(0);
    expect(compareTs('999999999.999999', '1000000000.000000')).toBeLessThan(0);
    expect(compareTs('1712345678.000100', '1712345678.000100')).toBe(0);
    expect(tsAt(1_712_345_678_123)).toBe('1712345678.123000');
    expect(tsBefore('1712345678.000000')).toBe('1712345677.999999');
  });

  it('name a thread as its channel and its root', () => {
    expect(conversationKey('C0123ABCD', '1712345678.000100')).toBe('C0123ABCD/1712345678.000100');
    expect(parseConversationKey('C0123ABCD/1712345678.000100')).toEqual({ channel: 'C0123ABCD', threadTs: '1712345678.000100' });
    expect(parseConversationKey('D0123ABCD')).toEqual({ channel: 'D0123ABCD', threadTs: undefined });
  });
});

describe('the conversation positions', () => {
  it('start a conversation never seen two minutes before the first connection, and move only forward', () => {
    const dir = dataDir();
    const now = 1_712_345_678_000;
    const positions = ConversationPositions.forBot(dir, 'T0TEAM1234', 'U0BOT12345', silentLogger, now);
    expect(positions.last('C0NEW12345')).toBe(tsAt(now - SINCE_MARGIN_MS));
    expect(positions.has('C0NEW12345')).toBe(false);
    positions.advance('C0NEW12345', '1712345600.000001');
    positions.advance('C0NEW12345', '1712345500.000001');
    expect(positions.last('C0NEW12345')).toBe('1712345600.000001');
    expect(positions.seen('C0NEW12345', '1712345600.000001')).toBe(true);
    expect(positions.seen('C0NEW12345', '1712345600.000002')).toBe(false);
  });

  it('survive a restart in a private file, and a broken file is moved aside, not trusted', () => {
    const dir = dataDir();
    const first = ConversationPositions.forBot(dir, 'T0TEAM1234', 'U0BOT12345', silentLogger);
    first.advance('D0DM123456', '1712345678.000100');
    const again = ConversationPositions.forBot(dir, 'T0TEAM1234', 'U0BOT12345', silentLogger);
    expect(again.last('D0DM123456')).toBe('1712345678.000100');
    expect(again.since).toBe(first.since);
    const file = join(dir, 'slack', 'T0TEAM1234-U0BOT12345.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    writeFileSync(file, '{"v":1,"conversations":{"../../etc":"1"}}');
    const broken = ConversationPositions.forBot(dir, 'T0TEAM1234', 'U0BOT12345', silentLogger);
    expect(broken.has('D0DM123456')).toBe(false);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ v: 1, conversations: {} });
  });

  it('forgets a conversation it cannot read any more', () => {
    const positions = ConversationPositions.forBot(dataDir(), 'T0TEAM1234', 'U0BOT12345', silentLogger);
    positions.advance('C0GONE1234', '1712345678.000100');
    positions.forget('C0GONE1234');
    expect(positions.known()).toEqual([]);
  });
});
