import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ConfigView } from '../../shared/api';
import { autoUpdateOf, CHECK_EVERY_MS, FIRST_CHECK_MS, UpdateController, type Updater, type UpdateNews } from './update-controller';

/**
 * electron-updater's autoUpdater as far as Homing uses it: checkForUpdates()
 * emits 'update-available' and (with autoDownload) later 'update-downloaded',
 * or rejects and emits 'error' for the same failure, as AppUpdater does.
 */
class FakeUpdater extends EventEmitter implements Updater {
  autoDownload = false;
  autoInstallOnAppQuit = true;
  logger: unknown = console;
  checks = 0;
  /** What the next checks do. */
  next: { kind: 'newer'; version: string } | { kind: 'none' } | { kind: 'offline' } = { kind: 'none' };
  installs: { isSilent: boolean | undefined; isForceRunAfter: boolean | undefined }[] = [];
  readonly calls: string[] = [];

  async checkForUpdates() {
    this.checks++;
    const next = this.next;
    if (next.kind === 'offline') {
      const error = new Error('net::ERR_INTERNET_DISCONNECTED');
      this.emit('error', error);
      throw error;
    }
    if (next.kind === 'none') return { downloadPromise: null };
    this.emit('update-available', { version: next.version });
    const downloadPromise = Promise.resolve().then(() => this.emit('update-downloaded', { version: next.version }));
    return { downloadPromise };
  }

  quitAndInstall(isSilent?: boolean, isForceRunAfter?: boolean): void {
    this.calls.push('quitAndInstall');
    this.installs.push({ isSilent, isForceRunAfter });
  }
}

function setup(options: { stopGateway?: () => Promise<void>; load?: () => Promise<Updater>; stopTimeoutMs?: number } = {}) {
  const updater = new FakeUpdater();
  const news: UpdateNews[] = [];
  const lines: string[] = [];
  const load = vi.fn(options.load ?? (async () => updater));
  const stopGateway = vi.fn(
    options.stopGateway ??
      (async () => {
        updater.calls.push('stopGateway');
      }),
  );
  const controller = new UpdateController({
    load,
    stopGateway,
    announce: (item) => news.push(item),
    log: { info: (line) => lines.push(`info ${line}`), warn: (line) => lines.push(`warn ${line}`) },
    ...(options.stopTimeoutMs !== undefined ? { stopTimeoutMs: options.stopTimeoutMs } : {}),
  });
  return { updater, news, lines, load, stopGateway, controller };
}

/** Runs the first check (and whatever its promises start) under fake timers. */
async function firstCheck(): Promise<void> {
  await vi.advanceTimersByTimeAsync(FIRST_CHECK_MS);
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('updates in the tray app', () => {
  it('announces a new version when it is found and again once it is downloaded, once each', async () => {
    const { updater, news, controller } = setup();
    updater.next = { kind: 'newer', version: '0.2.0' };
    controller.setEnabled(true);
    await firstCheck();
    expect(news).toEqual([
      { version: '0.2.0', downloaded: false },
      { version: '0.2.0', downloaded: true },
    ]);
    expect(controller.ready).toBe('0.2.0');
    // Downloads in the background; installing is Homing's, at a clean quit, never electron-updater's own on-quit.
    expect(updater.autoDownload).toBe(true);
    expect(updater.autoInstallOnAppQuit).toBe(false);
    expect(updater.logger).toBeNull();

    // The next check finds the same version: nothing new to say.
    await vi.advanceTimersByTimeAsync(CHECK_EVERY_MS);
    expect(updater.checks).toBe(2);
    expect(news).toHaveLength(2);
  });

  it('checks a while after the start, then every 6 hours, on timers that never hold the app up', async () => {
    const { updater, load, controller } = setup();
    controller.setEnabled(true);
    expect(vi.getTimerCount()).toBe(1);
    // electron-updater is loaded at the first check, not before.
    expect(load).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(FIRST_CHECK_MS - 1);
    expect(updater.checks).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(updater.checks).toBe(1);
    await vi.advanceTimersByTimeAsync(CHECK_EVERY_MS);
    expect(updater.checks).toBe(2);
    expect(load).toHaveBeenCalledTimes(1);

    const timer = vi.spyOn(globalThis, 'setTimeout');
    await vi.advanceTimersByTimeAsync(CHECK_EVERY_MS);
    const scheduled = timer.mock.results.at(-1)?.value as { hasRef(): boolean };
    timer.mockRestore();
    expect(scheduled.hasRef()).toBe(false);
  });

  it('installs at a quit only after the gateway has stopped cleanly', async () => {
    let stopped: () => void = () => {};
    const { updater, controller, stopGateway } = setup({
      stopGateway: () =>
        new Promise<void>((resolve) => {
          stopped = () => {
            updater.calls.push('stopGateway');
            resolve();
          };
        }),
    });
    updater.next = { kind: 'newer', version: '0.2.0' };
    controller.setEnabled(true);
    await firstCheck();

    const quitting = controller.quit(true);
    await vi.advanceTimersByTimeAsync(5_000);
    // Still stopping (replies being sent): nothing is installed meanwhile.
    expect(stopGateway).toHaveBeenCalledTimes(1);
    expect(updater.installs).toEqual([]);
    stopped();
    expect(await quitting).toBe('installing');
    expect(updater.calls).toEqual(['stopGateway', 'quitAndInstall']);
    expect(updater.installs).toEqual([{ isSilent: true, isForceRunAfter: true }]);
  });

  it('does not install when the gateway did not stop cleanly, and says why', async () => {
    const { updater, controller, lines } = setup({ stopGateway: () => Promise.reject(new Error('the gateway process ended with code 9')) });
    updater.next = { kind: 'newer', version: '0.2.0' };
    controller.setEnabled(true);
    await firstCheck();
    expect(await controller.quit(false)).toBe('quit');
    expect(updater.installs).toEqual([]);
    expect(lines).toContain('warn not installing Homing 0.2.0 now: the gateway process ended with code 9; it is installed at the next quit');
  });

  it('does not install when the gateway takes too long to stop', async () => {
    const { updater, controller, lines } = setup({ stopGateway: () => new Promise<void>(() => {}), stopTimeoutMs: 15_000 });
    updater.next = { kind: 'newer', version: '0.2.0' };
    controller.setEnabled(true);
    await firstCheck();
    const quitting = controller.quit(false);
    await vi.advanceTimersByTimeAsync(15_000);
    expect(await quitting).toBe('quit');
    expect(updater.installs).toEqual([]);
    expect(lines).toContain('warn not installing Homing 0.2.0 now: the gateway did not stop within 15 s; it is installed at the next quit');
  });

  it('a quit with nothing downloaded only stops the gateway', async () => {
    const { updater, controller, stopGateway } = setup();
    controller.setEnabled(true);
    await firstCheck();
    expect(await controller.quit(false)).toBe('quit');
    expect(stopGateway).toHaveBeenCalledTimes(1);
    expect(updater.installs).toEqual([]);
    // No check after the quit began.
    await vi.advanceTimersByTimeAsync(CHECK_EVERY_MS * 2);
    expect(updater.checks).toBe(1);
  });

  it('with autoUpdate false does nothing at all: no check, no timer, electron-updater not loaded', async () => {
    const { updater, load, controller, news, stopGateway } = setup();
    controller.setEnabled(false);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(CHECK_EVERY_MS * 3);
    expect(load).not.toHaveBeenCalled();
    expect(updater.checks).toBe(0);
    expect(news).toEqual([]);
    expect(await controller.quit(false)).toBe('quit');
    expect(stopGateway).toHaveBeenCalledTimes(1);
  });

  it('a config reload that turns it off stops the timer and takes the news back; turning it on checks again', async () => {
    const { updater, controller, news } = setup();
    updater.next = { kind: 'newer', version: '0.2.0' };
    controller.setEnabled(true);
    await firstCheck();
    expect(vi.getTimerCount()).toBe(1);

    controller.setEnabled(false);
    expect(vi.getTimerCount()).toBe(0);
    expect(news.at(-1)).toBeNull();
    expect(controller.ready).toBeUndefined();
    await vi.advanceTimersByTimeAsync(CHECK_EVERY_MS * 2);
    expect(updater.checks).toBe(1);
    // Off means off: what was downloaded is not installed either.
    expect(await controller.quit(false)).toBe('quit');
    expect(updater.installs).toEqual([]);
  });

  it('turned on again, checks again after the first delay', async () => {
    const { updater, controller } = setup();
    controller.setEnabled(true);
    await firstCheck();
    controller.setEnabled(false);
    controller.setEnabled(true);
    expect(vi.getTimerCount()).toBe(1);
    await firstCheck();
    expect(updater.checks).toBe(2);
  });

  it('logs a failure once (checkForUpdates both rejects and emits it), never throws, and retries only at the next check', async () => {
    const { updater, controller, lines, news } = setup();
    updater.next = { kind: 'offline' };
    controller.setEnabled(true);
    await firstCheck();
    await vi.advanceTimersByTimeAsync(CHECK_EVERY_MS * 3);
    // One try per scheduled check, not a loop.
    expect(updater.checks).toBe(4);
    expect(lines).toEqual(['info could not check for or download an update (tries again at the next check): net::ERR_INTERNET_DISCONNECTED']);
    expect(news).toEqual([]);

    // Once a check works again, a new failure is worth a line again.
    updater.next = { kind: 'none' };
    await vi.advanceTimersByTimeAsync(CHECK_EVERY_MS);
    updater.next = { kind: 'offline' };
    await vi.advanceTimersByTimeAsync(CHECK_EVERY_MS);
    expect(lines).toHaveLength(2);
  });

  it('a download that fails is an error event, not an unhandled rejection', async () => {
    const { updater, controller, lines } = setup();
    updater.checkForUpdates = async () => {
      updater.checks++;
      updater.emit('update-available', { version: '0.2.0' });
      const downloadPromise = Promise.reject(new Error('sha512 checksum mismatch'));
      downloadPromise.catch(() => updater.emit('error', new Error('sha512 checksum mismatch')));
      return { downloadPromise };
    };
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      controller.setEnabled(true);
      await firstCheck();
      await vi.advanceTimersByTimeAsync(0);
    } finally {
      process.off('unhandledRejection', unhandled);
    }
    expect(unhandled).not.toHaveBeenCalled();
    expect(lines).toContain('info could not check for or download an update (tries again at the next check): sha512 checksum mismatch');
    expect(controller.ready).toBeUndefined();
  });

  it('electron-updater that does not load turns updates off with one line, and is not retried', async () => {
    const { controller, lines, load } = setup({ load: () => Promise.reject(new Error("Cannot find module 'electron-updater'")) });
    controller.setEnabled(true);
    await firstCheck();
    await vi.advanceTimersByTimeAsync(CHECK_EVERY_MS * 2);
    expect(load).toHaveBeenCalledTimes(1);
    expect(lines).toEqual(["warn updates are off: electron-updater did not load (Cannot find module 'electron-updater')"]);
  });
});

describe('autoUpdateOf', () => {
  const view = (config: unknown): ConfigView => ({ path: 'config.json', config, written: {}, error: null, secretsSet: [], suggestion: null });

  it('is on unless the configuration in force says false', () => {
    expect(autoUpdateOf(view({ autoUpdate: true }))).toBe(true);
    expect(autoUpdateOf(view({}))).toBe(true);
    expect(autoUpdateOf(view({ autoUpdate: false }))).toBe(false);
  });
});

