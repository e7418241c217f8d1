import { describe, expect, it } from 'vitest';
import type { Clock } from '../clock';
import { bootClock, SleepDetector } from './sleep-detector';

/** Three clocks moved by hand: the wall clock, the monotonic clock (stops in a suspension) and the boot clock (does not). */
function fakeClocks(withBoot = true) {
  let wall = 1_700_000_000_000;
  let monotonic = 1_000;
  let boot = 50_000;
  const clock: Clock = { now: () => wall, monotonic: () => monotonic };
  return {
    clock,
    boottime: () => (withBoot ? boot : undefined),
    /** Awake time passing (a tick, or a stall of the event loop). */
    tick(ms: number) {
      wall += ms;
      monotonic += ms;
      boot += ms;
    },
    /** The machine suspended. */
    suspend(ms: number) {
      wall += ms;
      boot += ms;
    },
    setWall(ms: number) {
      wall += ms;
    },
  };
}

function detector(time: ReturnType<typeof fakeClocks>) {
  const resumes: number[] = [];
  const stalls: number[] = [];
  const sleep = new SleepDetector({ clock: time.clock, boottime: time.boottime, intervalMs: 5_000, onResume: (ms) => resumes.push(ms), onStall: (ms) => stalls.push(ms) });
  return { sleep, resumes, stalls };
}

describe('SleepDetector', () => {
  it('reports a wall clock set forward or back (the schedules look again), and a sleep as a sleep only (Linux)', () => {
    const time = fakeClocks(true);
    const changes: number[] = [];
    const resumes: number[] = [];
    const sleep = new SleepDetector({ clock: time.clock, boottime: time.boottime, intervalMs: 5_000, onResume: (ms) => resumes.push(ms), onClockChange: (ms) => changes.push(ms) });
    time.tick(5_000);
    sleep.check();
    time.setWall(3_600_000);
    time.tick(5_000);
    sleep.check();
    time.setWall(-7_200_000);
    time.tick(5_000);
    sleep.check();
    // NTP's small corrections are drift, not a change.
    time.setWall(800);
    time.tick(5_000);
    sleep.check();
    time.suspend(3_600_000);
    time.tick(5_000);
    sleep.check();
    expect(changes).toEqual([3_600_000, -7_200_000]);
    expect(resumes).toEqual([3_600_000]);
  });

  it('reports a wall clock set back where no boot clock tells a sleep from a clock set forward', () => {
    const time = fakeClocks(false);
    const changes: number[] = [];
    const sleep = new SleepDetector({ clock: time.clock, boottime: time.boottime, intervalMs: 5_000, onResume: () => {}, onClockChange: (ms) => changes.push(ms) });
    time.setWall(-600_000);
    time.tick(5_000);
    sleep.check();
    expect(changes).toEqual([-600_000]);
  });

  for (const withBoot of [true, false]) {
    const where = withBoot ? 'measured by the boot clock (Linux)' : 'guessed from the wall clock (elsewhere)';

    it(`reports a resume after a suspension, ${where}`, () => {
      const time = fakeClocks(withBoot);
      const { sleep, resumes, stalls } = detector(time);
      time.tick(5_000);
      sleep.check();
      expect(resumes).toEqual([]);
      time.suspend(3 * 3600_000);
      time.tick(5_000);
      sleep.check();
      expect(resumes).toEqual([3 * 3600_000]);
      expect(stalls).toEqual([]);
      expect(sleep.suspendedMs()).toBe(3 * 3600_000);
    });

    it(`takes a tick far too late with no suspension for a stall, not a sleep, ${where}`, () => {
      const time = fakeClocks(withBoot);
      const { sleep, resumes, stalls } = detector(time);
      time.tick(125_000);
      sleep.check();
      expect(resumes).toEqual([]);
      expect(stalls).toEqual([120_000]);
      expect(sleep.suspendedMs()).toBe(0);
    });
  }

  it('sees a stall even when the suspension was measured in between (a sweep asked)', () => {
    const time = fakeClocks();
    const { sleep, stalls } = detector(time);
    time.tick(3_000);
    expect(sleep.suspendedMs()).toBe(0);
    time.tick(7_000); // blocked for 5 s past the tick
    sleep.check();
    expect(stalls).toEqual([5_000]);
  });

  it('reports a sleep the awake clock already asked about at the next tick', () => {
    const time = fakeClocks();
    const { sleep, resumes } = detector(time);
    time.suspend(60_000);
    expect(sleep.suspendedMs()).toBe(60_000);
    time.tick(5_000);
    sleep.check();
    expect(resumes).toEqual([60_000]);
    expect(sleep.suspendedMs()).toBe(60_000);
  });

  it('ignores ordinary jitter', () => {
    const time = fakeClocks(false);
    const { sleep, resumes, stalls } = detector(time);
    for (let i = 0; i < 10; i++) {
      time.tick(5_000 + (i % 3) * 400);
      time.setWall(i % 2 ? 800 : -800);
      sleep.check();
    }
    expect(resumes).toEqual([]);
    expect(stalls).toEqual([]);
    expect(sleep.suspendedMs()).toBe(0);
  });

  it.runIf(process.platform === 'linux')('reads the boot clock from /proc/uptime, in step with the monotonic clock while awake', async () => {
    const boot = bootClock()!;
    const monotonic = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const bootDelta = bootClock()! - boot;
    const monotonicDelta = performance.now() - monotonic;
    expect(Math.abs(bootDelta - monotonicDelta)).toBeLessThan(50);
  });
});
