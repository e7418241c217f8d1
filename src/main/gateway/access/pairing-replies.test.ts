import { describe, expect, it } from 'vitest';
import { PairingReplyLimit } from './pairing-replies';
import { defaultReconnectDelay } from '../platforms/backoff';

describe('PairingReplyLimit', () => {
  it('answers at most max strangers in a window, and more once the window has moved on', () => {
    const limit = new PairingReplyLimit(3, 1_000);
    expect([0, 10, 20, 30].map((at) => limit.take(at))).toEqual([true, true, true, false]);
    expect(limit.take(999)).toBe(false);
    expect(limit.take(1_000)).toBe(true); // the first one is out of the window
    expect(limit.take(1_001)).toBe(false);
  });

  it('says how long until the next reply may go', () => {
    const limit = new PairingReplyLimit(2, 1_000);
    expect(limit.waitMs(0)).toBe(0);
    limit.take(0);
    limit.take(300);
    expect(limit.waitMs(400)).toBe(600);
    expect(limit.waitMs(1_000)).toBe(0);
  });

  it('defaults to 20 per 10 minutes', () => {
    const limit = new PairingReplyLimit();
    expect(Array.from({ length: 21 }, () => limit.take(5)).filter(Boolean)).toHaveLength(20);
    expect(limit.take(5 + 10 * 60 * 1000)).toBe(true);
  });
});

describe('defaultReconnectDelay', () => {
  it('doubles from about a second to at most five minutes, with jitter of a fifth', () => {
    for (const [attempt, base] of [[1, 1_000], [2, 2_000], [5, 16_000], [40, 300_000]] as const) {
      const delay = defaultReconnectDelay(attempt);
      expect(delay).toBeGreaterThanOrEqual(base * 0.8);
      expect(delay).toBeLessThanOrEqual(base * 1.2);
    }
  });
});
