/**
 * The headless gateway's update check: it only tells. A while after the start
 * and then once a day it looks at the release feed (release-check.ts); a newer
 * release is one log line (`update available`) and a notice in the overview,
 * which the window shows as a banner. It never downloads or installs anything:
 * a headless gateway was installed by hand (npm, a checkout), and is updated
 * the same way.
 *
 * Invariants: at most one check at a time, and the next is scheduled only once
 * one has finished, so a feed that hangs or fails never turns into a loop; the
 * timers are unref'd (they never hold a stopping process up); a failure is
 * logged once until a check succeeds again; while off (`autoUpdate: false`)
 * there is no timer and no request at all.
 */
import type { UpdateNotice } from '../../../shared/api';
import type { Logger } from '../logger';
import { checkLatestRelease, type ReleaseCheck, type ReleaseFetch } from './release-check';

export const FIRST_CHECK_MS = 30_000;
export const CHECK_EVERY_MS = 24 * 60 * 60 * 1000;

export interface ReleaseWatchOptions {
  readonly check: () => Promise<ReleaseCheck>;
  readonly logger: Logger;
  /** A newer release was found; null: the notice no longer holds (the check was turned off, or the release withdrawn). */
  readonly onNotice: (notice: UpdateNotice | null) => void;
  readonly firstCheckMs?: number;
  readonly everyMs?: number;
}

export class ReleaseWatch {
  private enabled = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Bumped whenever it is turned off or on: a check started before answers into the void. */
  private generation = 0;
  private announced: string | undefined;
  private lastFailure: string | undefined;

  constructor(private readonly options: ReleaseWatchOptions) {}

  /** Follows `autoUpdate`: on schedules the first check, off cancels everything and takes the notice back. */
  setEnabled(enabled: boolean): void {
    if (enabled === this.enabled) return;
    this.enabled = enabled;
    this.generation++;
    this.cancel();
    if (enabled) {
      this.schedule(this.options.firstCheckMs ?? FIRST_CHECK_MS);
    } else if (this.announced !== undefined) {
      this.announced = undefined;
      this.options.onNotice(null);
    }
  }

  /** The gateway stops: no more checks (a check under way is left to finish unheard). */
  stop(): void {
    this.enabled = false;
    this.generation++;
    this.cancel();
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => void this.run(), ms);
    this.timer.unref();
  }

  private cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async run(): Promise<void> {
    this.timer = undefined;
    const generation = this.generation;
    const result = await this.options.check().catch((error: unknown): ReleaseCheck => ({ kind: 'failed', reason: String(error) }));
    if (generation !== this.generation) return;
    this.report(result);
    this.schedule(this.options.everyMs ?? CHECK_EVERY_MS);
  }

  private report(result: ReleaseCheck): void {
    switch (result.kind) {
      case 'newer':
        this.lastFailure = undefined;
        if (this.announced === result.version) return;
        this.announced = result.version;
        this.options.logger.info('update available', { version: result.version, url: result.url });
        this.options.onNotice({ version: result.version, url: result.url });
        return;
      case 'not-newer':
        this.lastFailure = undefined;
        if (this.announced === undefined) return;
        this.announced = undefined;
        this.options.onNotice(null);
        return;
      case 'failed':
        if (this.lastFailure === result.reason) return;
        this.lastFailure = result.reason;
        this.options.logger.info('could not check for a new release (tries again later)', { reason: result.reason });
        return;
    }
  }
}

export interface HeadlessUpdateCheck {
  /** How the feed is read; default fetch over HTTPS. */
  readonly fetch?: ReleaseFetch;
  readonly firstCheckMs?: number;
  readonly everyMs?: number;
}

/**
 * The watch a gateway runs, or undefined when it runs none: only a headless
 * gateway checks (the tray app's main process has electron-updater), and
 * never with HOMING_NO_UPDATE_CHECK=1 (the tests set it) or `check: false`.
 */
export function releaseWatchFor(options: {
  readonly mode: 'app' | 'headless';
  readonly env: NodeJS.ProcessEnv;
  readonly version: string;
  readonly logger: Logger;
  readonly check: HeadlessUpdateCheck | false | undefined;
  readonly onNotice: (notice: UpdateNotice | null) => void;
}): ReleaseWatch | undefined {
  if (options.mode !== 'headless' || options.check === false || options.env.HOMING_NO_UPDATE_CHECK === '1') return undefined;
  const { fetch, firstCheckMs, everyMs } = options.check ?? {};
  return new ReleaseWatch({
    check: () => checkLatestRelease({ currentVersion: options.version, fetch }),
    logger: options.logger,
    onNotice: options.onNotice,
    firstCheckMs,
    everyMs,
  });
}
