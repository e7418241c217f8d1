import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { UpdateNotice } from '../../../shared/api';
import { createLineLogger, silentLogger } from '../logger';
import type { ReleaseCheck, ReleaseFetch } from './release-check';
import { CHECK_EVERY_MS, FIRST_CHECK_MS, ReleaseWatch, releaseWatchFor } from './release-watch';

const NEWER: ReleaseCheck = { kind: 'newer', version: '0.3.0', url: 'https://github.com/homing-app/homing/releases/tag/v0.3.0' };

function setup(answers: ReleaseCheck[] = [NEWER]) {
  const lines: string[] = [];
  const notices: (UpdateNotice | null)[] = [];
  let index = 0;
  const check = vi.fn(async () => answers[Math.min(index++, answers.length - 1)]!);
  const watch = new ReleaseWatch({
    check,
    logger: createLineLogger({ write: (line) => lines.push(line.replace(/^\S+ /, '')) }),
    onNotice: (notice) => notices.push(notice),
  });
  return { watch, check, lines, notices };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the headless gateway\'s update check', () => {
  it('tells of a newer release once: one log line and a notice for the window', async () => {
    const { watch, check, lines, notices } = setup();
    watch.setEnabled(true);
    await vi.advanceTimersByTimeAsync(FIRST_CHECK_MS);
    expect(check).toHaveBeenCalledTimes(1);
    expect(lines).toEqual(['INFO  update available {"version":"0.3.0","url":"https://github.com/homing-app/homing/releases/tag/v0.3.0"}']);
    expect(notices).toEqual([{ version: '0.3.0', url: NEWER.url }]);
    // A day later, the same release: nothing more to say.
    await vi.advanceTimersByTimeAsync(CHECK_EVERY_MS);
    expect(check).toHaveBeenCalledTimes(2);
    expect(lines).toHaveLength(1);
    expect(notices).toHaveLength(1);
  });

  it('checks 30 s after the start, then daily, on an unref\'d timer', async () => {
    const { watch, check } = setup([{ kind: 'not-newer', latest: '0.2.0' }]);
    const timer = vi.spyOn(globalThis, 'setTimeout');
    watch.setEnabled(true);
    const first = timer.mock.results[0]?.value as { hasRef(): boolean };
    timer.mockRestore();
    expect(first.hasRef()).toBe(false);
    await vi.advanceTimersByTimeAsync(FIRST_CHECK_MS - 1);
    expect(check).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1 + CHECK_EVERY_MS * 2);
    expect(check).toHaveBeenCalledTimes(3);
  });

  it('with autoUpdate false asks nothing and sets no timer', async () => {
    const { watch, check, notices } = setup();
    watch.setEnabled(false);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(CHECK_EVERY_MS * 2);
    expect(check).not.toHaveBeenCalled();
    expect(notices).toEqual([]);
  });

  it('turned off by a config reload: the timer stops and the banner goes', async () => {
    const { watch, check, notices } = setup();
    watch.setEnabled(true);
    await vi.advanceTimersByTimeAsync(FIRST_CHECK_MS);
    watch.setEnabled(false);
    expect(vi.getTimerCount()).toBe(0);
    expect(notices).toEqual([{ version: '0.3.0', url: NEWER.url }, null]);
    await vi.advanceTimersByTimeAsync(CHECK_EVERY_MS * 2);
    expect(check).toHaveBeenCalledTimes(1);
  });

  it('a check under way when it is turned off is not heard, and schedules nothing', async () => {
    let answer: (result: ReleaseCheck) => void = () => {};
    const notices: (UpdateNotice | null)[] = [];
    const watch = new ReleaseWatch({ check: () => new Promise((resolve) => (answer = resolve)), logger: silentLogger, onNotice: (notice) => notices.push(notice) });
    watch.setEnabled(true);
    await vi.advanceTimersByTimeAsync(FIRST_CHECK_MS);
    watch.setEnabled(false);
    answer(NEWER);
    await vi.advanceTimersByTimeAsync(0);
    expect(notices).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('logs a failure once, at info, until a check works again; never throws', async () => {
    const offline: ReleaseCheck = { kind: 'failed', reason: 'fetch failed (ENOTFOUND)' };
    const { watch, check, lines, notices } = setup([offline, offline, offline, { kind: 'not-newer', latest: '0.2.0' }, offline]);
    watch.setEnabled(true);
    await vi.advanceTimersByTimeAsync(FIRST_CHECK_MS + CHECK_EVERY_MS * 4);
    expect(check).toHaveBeenCalledTimes(5);
    expect(lines).toEqual([
      'INFO  could not check for a new release (tries again later) {"reason":"fetch failed (ENOTFOUND)"}',
      'INFO  could not check for a new release (tries again later) {"reason":"fetch failed (ENOTFOUND)"}',
    ]);
    expect(notices).toEqual([]);
  });

  it('a check that throws is a failure like any other', async () => {
    const lines: string[] = [];
    const watch = new ReleaseWatch({
      check: () => Promise.reject(new Error('boom')),
      logger: createLineLogger({ write: (line) => lines.push(line) }),
      onNotice: () => {},
    });
    watch.setEnabled(true);
    await vi.advanceTimersByTimeAsync(FIRST_CHECK_MS);
    expect(lines).toEqual([expect.stringContaining('could not check for a new release (tries again later) {"reason":"Error: boom"}')]);
    expect(vi.getTimerCount()).toBe(1);
  });

  it('takes the notice back when the release is withdrawn', async () => {
    const { watch, notices } = setup([NEWER, { kind: 'not-newer', latest: '0.2.0' }]);
    watch.setEnabled(true);
    await vi.advanceTimersByTimeAsync(FIRST_CHECK_MS + CHECK_EVERY_MS);
    expect(notices).toEqual([{ version: '0.3.0', url: NEWER.url }, null]);
  });
});

describe('which gateway checks', () => {
  const base = { version: '0.2.0', logger: silentLogger, onNotice: () => {}, check: undefined };

  it('only a headless one, and not with HOMING_NO_UPDATE_CHECK=1 or check: false', () => {
    expect(releaseWatchFor({ ...base, mode: 'headless', env: {} })).toBeInstanceOf(ReleaseWatch);
    expect(releaseWatchFor({ ...base, mode: 'app', env: {} })).toBeUndefined();
    expect(releaseWatchFor({ ...base, mode: 'headless', env: { HOMING_NO_UPDATE_CHECK: '1' } })).toBeUndefined();
    expect(releaseWatchFor({ ...base, mode: 'headless', env: {}, check: false })).toBeUndefined();
  });

  it('reads the feed through the fetch it is given', async () => {
    const fetch = vi.fn<ReleaseFetch>(async () => new Response(JSON.stringify({ tag_name: 'v0.3.0' })));
    const notices: (UpdateNotice | null)[] = [];
    const watch = releaseWatchFor({ ...base, mode: 'headless', env: {}, check: { fetch, firstCheckMs: 10 }, onNotice: (notice) => notices.push(notice) })!;
    watch.setEnabled(true);
    await vi.advanceTimersByTimeAsync(10);
    watch.stop();
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(notices).toEqual([{ version: '0.3.0', url: 'https://github.com/homing-app/homing/releases/tag/v0.3.0' }]);
  });
});
