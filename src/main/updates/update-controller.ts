/**
 * The tray app's updates: electron-updater's `autoUpdater`, driven through the
 * small part of it described by `Updater` (index.ts loads the real one lazily,
 * only in a packaged app: in development there is no feed). It checks a minute
 * after it is turned on and then every 6 hours, downloads a newer release in the
 * background, tells the user, and installs it only when Homing quits or
 * restarts — and only once the gateway has stopped cleanly, so an update never
 * cuts a reply off mid-send.
 *
 * Invariants:
 * - `autoUpdate: false` means nothing at all: electron-updater is not even
 *   loaded, no timer runs, no request leaves. Turning it off (a config reload)
 *   cancels the timer and takes the news back.
 * - electron-updater's own install-on-quit is off: it would install on any
 *   quit, whether or not the gateway stopped. Installing is `quit()`'s job.
 * - A failure (offline, no feed, a broken download) is logged once, at info,
 *   until a check succeeds again; the next try is the next scheduled check,
 *   never sooner. Nothing here throws at its caller.
 */
import type { ConfigView } from '../../shared/api';
import type { Logger } from '../gateway/logger';

/** The part of electron-updater's `autoUpdater` (an AppUpdater) that Homing uses. */
export interface Updater {
  autoDownload: boolean;
  autoInstallOnAppQuit: boolean;
  /** electron-updater logs every step to the console by default; Homing logs what matters itself. */
  logger: unknown;
  /** Resolves with the download under way (autoDownload), whose failure is also an 'error' event. */
  checkForUpdates(): Promise<{ readonly downloadPromise?: Promise<unknown> | null } | null>;
  quitAndInstall(isSilent?: boolean, isForceRunAfter?: boolean): void;
  on(event: 'update-available' | 'update-downloaded', listener: (info: { readonly version: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** What the user is told: a newer version found (and downloading), the same version downloaded, or (null) nothing any more. */
export type UpdateNews = { readonly version: string; readonly downloaded: boolean } | null;

/** How a quit ended: `installing` (quitAndInstall quits the app itself) or a plain quit, left to the caller. */
export type QuitOutcome = 'installing' | 'quit';

export const FIRST_CHECK_MS = 60_000;
export const CHECK_EVERY_MS = 6 * 60 * 60 * 1000;
/** Longer than the gateway process's own stop deadline (gateway-process.ts kills it after 8 s). */
export const STOP_TIMEOUT_MS = 15_000;

export interface UpdateControllerOptions {
  /** Loads electron-updater's autoUpdater: called once, at the first check. */
  readonly load: () => Promise<Updater>;
  /** Stops the gateway; rejects when it did not stop cleanly. */
  readonly stopGateway: () => Promise<void>;
  /** Tells the user (a notification, the tray menu, the window's banner). */
  readonly announce: (news: UpdateNews) => void;
  readonly log: Pick<Logger, 'info' | 'warn'>;
  readonly firstCheckMs?: number;
  readonly everyMs?: number;
  readonly stopTimeoutMs?: number;
}

/** `autoUpdate` in the configuration in force (config.json's default is on). */
export function autoUpdateOf(view: ConfigView): boolean {
  const config = view.config as { autoUpdate?: unknown } | null;
  return config?.autoUpdate !== false;
}

export class UpdateController {
  private enabled = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Bumped whenever checking is turned off or on: a check started before is not followed by another. */
  private generation = 0;
  private loading: Promise<Updater | undefined> | undefined;
  private updater: Updater | undefined;
  private available: string | undefined;
  private downloaded: string | undefined;
  private lastFailure: string | undefined;
  private quitting = false;

  constructor(private readonly options: UpdateControllerOptions) {}

  /** The downloaded version, installed at the next quit; undefined when there is none (or updates are off). */
  get ready(): string | undefined {
    return this.enabled ? this.downloaded : undefined;
  }

  /** Follows `autoUpdate` (at start and on every config reload). */
  setEnabled(enabled: boolean): void {
    if (enabled === this.enabled || this.quitting) return;
    this.enabled = enabled;
    this.generation++;
    this.cancel();
    if (enabled) {
      this.schedule(this.options.firstCheckMs ?? FIRST_CHECK_MS);
      return;
    }
    const told = this.available !== undefined || this.downloaded !== undefined;
    this.available = undefined;
    this.downloaded = undefined;
    if (told) this.options.announce(null);
  }

  /**
   * Homing quits (or restarts to update): the gateway is stopped first, and
   * awaited. A downloaded update is installed only if that stop was clean and
   * in time; otherwise it waits for the next quit, and the log says why.
   * `restart` starts Homing again after installing.
   */
  async quit(restart: boolean): Promise<QuitOutcome> {
    this.quitting = true;
    this.generation++;
    this.cancel();
    const version = this.ready;
    const stop = await this.stopGateway();
    if (version === undefined || this.updater === undefined) {
      if (!stop.ok) this.options.log.warn(`the gateway did not stop cleanly: ${stop.reason}`);
      return 'quit';
    }
    if (!stop.ok) {
      this.options.log.warn(`not installing Homing ${version} now: ${stop.reason}; it is installed at the next quit`);
      return 'quit';
    }
    try {
      this.options.log.info(`installing Homing ${version}`, { restart });
      this.updater.quitAndInstall(true, restart);
      return 'installing';
    } catch (error) {
      this.options.log.warn(`installing Homing ${version} failed: ${messageOf(error)}`);
      return 'quit';
    }
  }

  private async stopGateway(): Promise<{ ok: true } | { ok: false; reason: string }> {
    const timeoutMs = this.options.stopTimeoutMs ?? STOP_TIMEOUT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<{ ok: false; reason: string }>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, reason: `the gateway did not stop within ${timeoutMs / 1000} s` }), timeoutMs);
    });
    try {
      return await Promise.race([
        this.options.stopGateway().then(
          () => ({ ok: true }) as const,
          (error: unknown) => ({ ok: false, reason: messageOf(error) }) as const,
        ),
        timedOut,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => void this.check(), ms);
    this.timer.unref();
  }

  private cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async check(): Promise<void> {
    this.timer = undefined;
    const generation = this.generation;
    const updater = await this.load();
    if (updater && generation === this.generation) {
      try {
        const result = await updater.checkForUpdates();
        // The download's failure is reported by the 'error' event; its promise must not end up unhandled.
        result?.downloadPromise?.catch(() => undefined);
        this.lastFailure = undefined;
      } catch (error) {
        this.failed(error);
      }
    }
    if (generation === this.generation) this.schedule(this.options.everyMs ?? CHECK_EVERY_MS);
  }

  private load(): Promise<Updater | undefined> {
    this.loading ??= this.options.load().then(
      (updater) => {
        updater.autoDownload = true;
        updater.autoInstallOnAppQuit = false;
        updater.logger = null;
        updater.on('update-available', (info) => this.found(info.version, false));
        updater.on('update-downloaded', (info) => this.found(info.version, true));
        updater.on('error', (error) => this.failed(error));
        this.updater = updater;
        return updater;
      },
      (error: unknown) => {
        // Not retried: a module that does not load will not load in 6 hours either.
        this.options.log.warn(`updates are off: electron-updater did not load (${messageOf(error)})`);
        return undefined;
      },
    );
    return this.loading;
  }

  private found(version: string, downloaded: boolean): void {
    if (!this.enabled || this.quitting) return;
    if (downloaded ? this.downloaded === version : this.available === version || this.downloaded === version) return;
    this.available = version;
    if (downloaded) this.downloaded = version;
    this.options.log.info(downloaded ? `Homing ${version} is downloaded: it is installed at the next restart` : `update available: Homing ${version}, downloading`);
    this.options.announce({ version, downloaded });
  }

  private failed(error: unknown): void {
    const reason = messageOf(error);
    // checkForUpdates both rejects and emits 'error' for one failure: one line.
    if (reason === this.lastFailure) return;
    this.lastFailure = reason;
    this.options.log.info(`could not check for or download an update (tries again at the next check): ${reason}`);
  }
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // electron-updater's messages can carry a whole HTTP response: the first line says what happened.
  return message.split('\n')[0]!.slice(0, 300);
}
