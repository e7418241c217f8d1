import { afterEach, describe, expect, it, vi } from 'vitest';
import type { GatewayEvent } from '../../../shared/api';
import { createActivityLog, KEPT, type ActivityEntry, type EntryStorage } from './useActivity';

function memoryStorage(): EntryStorage & { saved: readonly ActivityEntry[] } {
  const storage = {
    saved: [] as readonly ActivityEntry[],
    load: () => storage.saved,
    save: (entries: readonly ActivityEntry[]) => void (storage.saved = entries),
  };
  return storage;
}

const refused = (sender: string): GatewayEvent => ({ type: 'sender.refused', platform: 'irc', sender, at: 0 });

afterEach(() => vi.useRealTimers());

describe('the activity log', () => {
  it('folds a platform retrying into two counted lines instead of two new lines a try', () => {
    let clock = 0;
    const log = createActivityLog(memoryStorage(), () => clock);
    const state = (state: 'connecting' | 'disconnected'): GatewayEvent => ({ type: 'platform.state', platform: { name: 'telegram', state, error: state === 'disconnected' ? 'fetch failed' : null }, at: 0 });
    for (let i = 0; i < 5; i++) {
      clock += 6_000;
      log.push(state('connecting'));
      clock += 6_000;
      log.push(state('disconnected'));
    }
    expect(log.entries().map((entry) => [entry.text.slice(0, 24), entry.times ?? 1])).toEqual([
      ['Telegram is not connecte', 5],
      ['Connecting to Telegram…', 5],
    ]);
    expect(log.entries()[0]!.at).toBe(clock);
    // Something else in between ends the fold; a long quiet does too.
    log.push(refused('mallory'));
    log.push(state('connecting'));
    clock += 11 * 60_000;
    log.push(state('connecting'));
    expect(log.entries().map((entry) => entry.times ?? 1)).toEqual([1, 1, 1, 5, 5]);
  });

  it('does not reorder other repeats: only the cycling of a platform folds into the line before the newest', () => {
    const log = createActivityLog(memoryStorage(), () => 0);
    log.push(refused('alice'));
    log.push(refused('bob'));
    log.push(refused('alice'));
    expect(log.entries().map((entry) => entry.text.match(/refused (\w+)/)![1])).toEqual(['alice', 'bob', 'alice']);
    log.push(refused('alice'));
    expect(log.entries()[0]!.times).toBe(2);
  });

  it('keeps the last 500 entries across reloads', () => {
    vi.useFakeTimers();
    const storage = memoryStorage();
    const log = createActivityLog(storage);
    for (let i = 0; i < KEPT + 20; i++) log.push(refused(`nick${i}`));
    vi.advanceTimersByTime(1_000);
    const reloaded = createActivityLog(storage);
    expect(reloaded.entries()).toHaveLength(KEPT);
    expect(reloaded.entries()[0]!.text).toContain('nick519');
  });

  it('says what happened in plain words, refused senders included, with no event names', () => {
    const log = createActivityLog(memoryStorage());
    log.push(refused('mallory'));
    log.push({ type: 'platform.state', platform: { name: 'irc', state: 'disconnected', error: 'connect ECONNREFUSED 127.0.0.1:6667' }, at: 0 });
    log.push({ type: 'turn.token', sessionId: 's', text: 'x' });
    const texts = log.entries().map((entry) => entry.text);
    expect(texts).toEqual([
      'IRC is not connected: nothing answers at 127.0.0.1:6667 (is the server running?).',
      'IRC refused mallory: not on the list of who may talk to the agent (Platforms → IRC).',
    ]);
    for (const text of texts) expect(text).not.toMatch(/platform\.state|sender\.refused|turn\./);
  });
});
