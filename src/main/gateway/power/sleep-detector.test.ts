import { describe, expect, it } from 'vitest';
import type { Clock } from '../clock';
import { SleepDetector } from './sleep-detector';

function fakeClock() {
  let wall = 1_700_000_000_000;
  let monotonic = 1_000;
  const clock: Clock = { now: () => wall, monotonic: () => monotonic };
  return {
    clock,
    tick(ms: number) {
      wall += ms;
      monotonic += ms;
    },
    sleep(ms: number) {
      wall += ms;
    },
    setWall(ms: number) {
      wall += ms;
    },
  };
}

describe('SleepDetector', () => {
  it('reports a resume when the wall clock jumped ahead of the monotonic clock', () => {
    const time = fakeClock();
    const resumes: number[] = [];
    const detector = new SleepDetector({ clock: time.clock, intervalMs: 5_000, onResume: (ms) => resumes.push(ms) });
    detector.start();
    time.tick(5_000);
    detector.check();
    expect(resumes).toEqual([]);
    time.sleep(3 * 3600_000);
    time.tick(5_000);
    detector.check();
    detector.stop();
    expect(resumes).toEqual([3 * 3600_000]);
  });

  it('reports a timer that fired far too late (a frozen process)', () => {
    const time = fakeClock();
    const resumes: number[] = [];
    const detector = new SleepDetector({ clock: time.clock, intervalMs: 5_000, onResume: (ms) => resumes.push(ms) });
    detector.start();
    time.tick(125_000);
    detector.check();
    detector.stop();
    expect(resumes).toEqual([120_000]);
  });

  it('ignores ordinary jitter', () => {
    const time = fakeClock();
    const resumes: number[] = [];
    const detector = new SleepDetector({ clock: time.clock, intervalMs: 5_000, onResume: (ms) => resumes.push(ms) });
    detector.start();
    for (let i = 0; i < 10; i++) {
      time.tick(5_000 + (i % 3) * 400);
      time.setWall(i % 2 ? 800 : -800);
      detector.check();
    }
    detector.stop();
    expect(resumes).toEqual([]);
  });
});
