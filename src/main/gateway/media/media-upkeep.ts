import type { Clock } from '../clock';
import type { Logger } from '../logger';
import { UPLOAD_KEEP_MS, type LocalUploads } from './local-uploads';
import type { MediaStore } from './media-store';

/** How often fetched media are checked against the retention time. */
export const MEDIA_SWEEP_EVERY_MS = 60 * 60_000;
/** The first sweep, after the start: walking every conversation's folder is no work for the start itself. */
const FIRST_SWEEP_MS = 60_000;
/** How long the counts Status shows are reused before the folder is walked again. */
const USAGE_FRESH_MS = 60_000;

/**
 * The maintenance sweep of fetched media: a minute after the start and then every hour, files
 * fetched longer ago than the retention time (`media.keepDays`) are removed
 * (media-store.ts removeOlderThan: their references then read "expired"), the
 * window's uploads no message took after a day, and what is kept is counted
 * for Status.
 */
export class MediaUpkeep {
  private timers: NodeJS.Timeout[] = [];
  private counted: { at: number; files: number; bytes: number } | undefined;

  constructor(
    private readonly store: MediaStore,
    private readonly uploads: LocalUploads,
    private readonly keepMs: () => number,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timers = [setTimeout(() => this.sweep(), FIRST_SWEEP_MS), setInterval(() => this.sweep(), MEDIA_SWEEP_EVERY_MS)];
    for (const timer of this.timers) timer.unref();
  }

  stop(): void {
    for (const timer of this.timers.splice(0)) clearTimeout(timer);
  }

  /** Removes what is past the retention time; returns how many files went. Never throws. */
  sweep(): number {
    try {
      const now = this.clock.now();
      const removed = this.store.removeOlderThan(now - this.keepMs());
      this.uploads.removeOlderThan(now - UPLOAD_KEEP_MS);
      if (removed > 0) this.logger.info('removed media past their retention time', { files: removed });
      this.counted = undefined;
      return removed;
    } catch (error) {
      this.logger.warn('the media sweep failed; it runs again in an hour', { error });
      return 0;
    }
  }

  /** Files kept and their bytes (counted at most once a minute). */
  usage(): { files: number; bytes: number } {
    const now = this.clock.now();
    if (!this.counted || now - this.counted.at > USAGE_FRESH_MS) {
      try {
        this.counted = { at: now, ...this.store.usage() };
      } catch {
        return { files: 0, bytes: 0 };
      }
    }
    return { files: this.counted.files, bytes: this.counted.bytes };
  }
}
