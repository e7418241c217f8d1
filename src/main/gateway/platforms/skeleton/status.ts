import type { Logger } from '../../logger';
import type { AdapterEvent, AdapterState } from '../adapter';
import { AdapterEvents } from '../adapter-events';

/**
 * An adapter's connection state and its listeners: the one place a state
 * change is recorded, said in the log and told to the listeners, so every
 * platform reports the same way.
 */
export class AdapterStatus {
  private current: AdapterState = 'disconnected';
  private readonly events: AdapterEvents;

  constructor(
    private readonly platform: string,
    private readonly logger: Logger,
    /** Whether a state change's error is also logged as a warning (IRC's connection logs its own). */
    private readonly logErrors = true,
  ) {
    this.events = new AdapterEvents(platform, logger);
  }

  get state(): AdapterState {
    return this.current;
  }

  /** Connected, or degraded (a part is missing but sends still go): the state in which an adapter sends. */
  get up(): boolean {
    return this.current === 'connected' || this.current === 'degraded';
  }

  /** Whether anyone listens (a message nobody hears is handed back to the platform, not taken). */
  get listening(): boolean {
    return this.events.listening;
  }

  listen(listener: (event: AdapterEvent) => void): () => void {
    return this.events.listen(listener);
  }

  emit(event: AdapterEvent): void {
    this.events.emit(event);
  }

  /**
   * Moves to `state`. The same state again without an error is no news and
   * is not told; with an error it is (a second reason to be disconnected).
   * `nextAttemptAt`: wall-clock ms of the next reconnect try, for the window.
   */
  set(state: AdapterState, error?: string, nextAttemptAt?: number): void {
    if (state === this.current && error === undefined && nextAttemptAt === undefined) return;
    this.current = state;
    if (error && this.logErrors) this.logger.warn(`${this.platform}: ${error}`);
    this.events.emit({ type: 'state', state, ...(error === undefined ? {} : { error }), ...(nextAttemptAt === undefined ? {} : { nextAttemptAt }) });
  }
}
