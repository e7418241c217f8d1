import type { Clock } from '../clock';
import type { Logger } from '../logger';
import { UPLOAD_KEEP_MS, type LocalUploads } from './local-uploads';
import type { MediaStore } from './media-store';

/** How often fetched media are checked against the retention time. */
export const MEDIA_SWEEP_EVERY_MS = 60 * 60_000;
/** How long the counts Status shows are reused before the folder is walked again. */
const USAGE_FRESH_MS = 60_000;

/**
 * The maintenance sweep of fetched media: at start and every hour, files
 * fetched longer ago than the retention time (`media.keepDays`) are removed
 * (media-store.ts removeOlderThan: their references then read "expired"), the
 * window's uploads no message took after a day, and what is kept is counted
 * for Status.
 */
export class MediaUpkeep {
  private timer: NodeJS.Timeout | undefined;
  private counted: { at: number; files: number; bytes: number } | undefined;

  constructor(
    private readonly store: MediaStore,
    private readonly uploads: LocalUploads,
    private readonly keepMs: () => number,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.sweep();
    this.timer = setInterval(() => this.sweep(), MEDIA_SWEEP_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
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
