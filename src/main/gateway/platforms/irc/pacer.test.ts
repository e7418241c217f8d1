import { describe, expect, it } from 'vitest';
import { Pacer } from './pacer';

/** A clock that only moves when the pacer sleeps: the test sees exactly how long it waited. */
function fakeTime() {
  let now = 0;
  const sleeps: number[] = [];
  return {
    clock: { monotonic: () => now },
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
    advance: (ms: number) => (now += ms),
    sleeps,
  };
}

describe('Pacer', () => {
  it('lets a burst through at once, then one line per interval', async () => {
    const time = fakeTime();
    const pacer = new Pacer({ burst: 4, intervalMs: 500 }, time.clock, time.sleep);
    for (let i = 0; i < 6; i++) await pacer.take();
    expect(time.sleeps).toEqual([500, 500]);
  });

  it('refills while idle, but never beyond the burst', async () => {
    const time = fakeTime();
    const pacer = new Pacer({ burst: 2, intervalMs: 100 }, time.clock, time.sleep);
    await Promise.all([pacer.take(), pacer.take()]);
    time.advance(10_000);
    await Promise.all([pacer.take(), pacer.take(), pacer.take()]);
    expect(time.sleeps).toEqual([100]);
  });

  it('serves callers in the order they asked', async () => {
    const time = fakeTime();
    const pacer = new Pacer({ burst: 1, intervalMs: 100 }, time.clock, time.sleep);
    const order: number[] = [];
    await Promise.all([1, 2, 3].map((n) => pacer.take().then(() => order.push(n))));
    expect(order).toEqual([1, 2, 3]);
  });
});
