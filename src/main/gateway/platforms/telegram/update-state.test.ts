import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../logger';
import { TelegramUpdateState } from './update-state';

describe("Telegram's remembered update position", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'homing-tg-state-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('survives a restart: handled updates stay handled, an update in flight is reported as interrupted', () => {
    const first = TelegramUpdateState.forBot(dir, 42, silentLogger);
    expect(first.interrupted).toBeNull();
    first.begin(100);
    first.done(100);
    first.begin(101);
    const second = TelegramUpdateState.forBot(dir, 42, silentLogger);
    expect(second.handled).toBe(100);
    expect(second.wasHandled(100)).toBe(true);
    expect(second.wasHandled(101)).toBe(false);
    expect(second.interrupted).toBe(101);
    const file = join(dir, 'telegram', 'bot-42.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Another bot (a new token) starts from scratch.
    expect(TelegramUpdateState.forBot(dir, 43, silentLogger).handled).toBe(0);
  });

  it('gives an update back (the gateway stopping) without marking it handled', () => {
    const state = TelegramUpdateState.forBot(dir, 1, silentLogger);
    state.begin(7);
    state.giveBack();
    const again = TelegramUpdateState.forBot(dir, 1, silentLogger);
    expect(again.interrupted).toBeNull();
    expect(again.wasHandled(7)).toBe(false);
  });

  it('follows migrations both ways, and refuses a loop', () => {
    const state = TelegramUpdateState.forBot(dir, 1, silentLogger);
    expect(state.migrate('-5', '-1005')).toBe(true);
    expect(state.migrate('-1005', '-5')).toBe(false);
    expect(state.current('-5')).toBe('-1005');
    expect(state.original('-1005')).toBe('-5');
    expect(TelegramUpdateState.forBot(dir, 1, silentLogger).current('-5')).toBe('-1005');
  });

  it('follows a renumbering down (the position restarts below the new ids), keeping what is in flight', () => {
    const state = TelegramUpdateState.forBot(dir, 3, silentLogger);
    state.done(700_000_010);
    state.begin(700_000_011);
    expect(state.rechecking).toBe(false);
    state.renumber(3_000_000);
    expect(state.handled).toBe(2_999_999);
    expect(state.wasHandled(3_000_000)).toBe(false);
    const again = TelegramUpdateState.forBot(dir, 3, silentLogger);
    expect(again.handled).toBe(2_999_999);
    expect(again.interrupted).toBe(700_000_011);
    // Until the queue is read to its end, what comes may have been taken under its old number.
    expect(again.rechecking).toBe(true);
    again.caughtUp();
    expect(TelegramUpdateState.forBot(dir, 3, silentLogger).rechecking).toBe(false);
  });

  it("forgets another Bot API server's position (its numbers are its own) and rechecks what the new one holds", () => {
    const state = TelegramUpdateState.forBot(dir, 5, silentLogger);
    expect(state.useServer('https://api.telegram.org')).toBe(false);
    state.done(900_000_000);
    expect(TelegramUpdateState.forBot(dir, 5, silentLogger).useServer('https://api.telegram.org')).toBe(false);
    const moved = TelegramUpdateState.forBot(dir, 5, silentLogger);
    expect(moved.useServer('http://localhost:8081')).toBe(true);
    expect(moved.handled).toBe(0);
    expect(moved.rechecking).toBe(true);
    expect(TelegramUpdateState.forBot(dir, 5, silentLogger).useServer('http://localhost:8081')).toBe(false);
  });

  it('remembers when Telegram last answered, written at most once a minute, and reads files written before it was kept', () => {
    const file = join(dir, 'telegram', 'bot-4.json');
    TelegramUpdateState.forBot(dir, 4, silentLogger).done(10);
    writeFileSync(file, JSON.stringify({ v: 1, handled: 10, inFlight: null, migrations: {} }));
    const state = TelegramUpdateState.forBot(dir, 4, silentLogger);
    expect(state.lastPolledAt).toBeUndefined();
    state.polled(1_000_000);
    state.polled(1_030_000);
    expect(TelegramUpdateState.forBot(dir, 4, silentLogger).lastPolledAt).toBe(1_000_000);
    state.polled(1_060_000);
    expect(TelegramUpdateState.forBot(dir, 4, silentLogger).lastPolledAt).toBe(1_060_000);
    // A clock set back is taken as it is.
    state.polled(5_000);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ handled: 10, lastPolledAt: 5_000 });
  });

  it('moves an unreadable file aside and starts over instead of crashing', () => {
    TelegramUpdateState.forBot(dir, 9, silentLogger).done(5);
    const file = join(dir, 'telegram', 'bot-9.json');
    writeFileSync(file, '{ not json');
    const state = TelegramUpdateState.forBot(dir, 9, silentLogger);
    expect(state.handled).toBe(0);
    state.done(6);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ handled: 6 });
  });
});
