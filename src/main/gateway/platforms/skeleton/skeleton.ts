import { systemClock, type Clock } from '../../clock';
import { silentLogger, type Logger } from '../../logger';
import { ReconnectBackoff } from '../backoff';
import { IntakeHandOn } from './hand-on';
import { AdapterStatus } from './status';

/** What every adapter's options carry for its skeleton (each adapter's own options extend it). */
export interface SkeletonOptions {
  readonly logger?: Logger;
  readonly clock?: Clock;
  /** Wait before reconnect attempt `attempt` (1, 2, …); default exponential with jitter. */
  readonly reconnectDelayMs?: (attempt: number) => number;
  /** How long the adapter waits for the pipeline to say a message is saved (default 30 s). */
  readonly intakeTimeoutMs?: number;
}

/**
 * The skeleton an adapter holds as one part (composition, not a base class):
 * its logger and clock, its state and events (`status`), the hand-on of a
 * message with its outcome (`handOn`) and the backoff between reconnects.
 * Admission, the receive loop or reconnect timer, and typing repeats are
 * further parts an adapter adds where it has them (this folder).
 */
export class AdapterSkeleton {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly status: AdapterStatus;
  readonly handOn: IntakeHandOn;
  readonly backoff: ReconnectBackoff;

  constructor(
    platform: string,
    options: SkeletonOptions,
    /** Whether a state change's error is also logged as a warning (IRC's connection logs its own). */
    logStateErrors = true,
  ) {
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? systemClock;
    this.status = new AdapterStatus(platform, this.logger, logStateErrors);
    this.handOn = new IntakeHandOn(this.status, options.intakeTimeoutMs);
    this.backoff = new ReconnectBackoff(options.reconnectDelayMs);
  }
}
