import type { Logger } from '../../logger';

/** How long the loop waits after an unexpected error before it starts again. */
const RESTART_DELAY_MS = 5_000;

/**
 * The running and stopping of an adapter whose receiving is one loop (a long
 * poll, an IMAP session): the loop's generation, its pauses, and its guard.
 *
 * Every connect and disconnect starts a new generation: a loop, a pause or a
 * send that began in an older one sees it moved and stops, so a disconnect
 * never has to wait for a loop to notice. A pause ends early when the adapter
 * stops, and on probe() (after a sleep) unless it waits out a time the
 * service asked for.
 */
export class ReceiveLoop {
  private isRunning = false;
  private currentGeneration = 0;
  private readonly sleepers = new Set<{ readonly wake: () => void; readonly probeEnds: boolean }>();
  /** The long poll in flight (Telegram's getUpdates, Matrix's /sync), if any. */
  private poll: AbortController | undefined;

  constructor(
    private readonly platform: string,
    private readonly logger: Logger,
    /** Takes secrets out of an error's words before they are logged (a token in a URL). */
    private readonly redact: (text: string) => string = (text) => text,
  ) {}

  get running(): boolean {
    return this.isRunning;
  }

  get generation(): number {
    return this.currentGeneration;
  }

  /** Whether the loop of `generation` should go on. */
  alive(generation: number): boolean {
    return this.isRunning && generation === this.currentGeneration;
  }

  /**
   * Starts `run` in a new generation, restarted after anything unexpected: a
   * bug or a hostile answer is logged and told (`crashed`, with the error's
   * words), never an unhandled rejection or a crash.
   */
  start(run: (generation: number) => Promise<void>, crashed: (words: string) => void): void {
    this.isRunning = true;
    const generation = ++this.currentGeneration;
    void this.guarded(generation, run, crashed);
  }

  private async guarded(generation: number, run: (generation: number) => Promise<void>, crashed: (words: string) => void): Promise<void> {
    while (this.alive(generation)) {
      try {
        await run(generation);
        return;
      } catch (error) {
        const words = this.redact(describe(error));
        this.logger.error(`${this.platform}: the receive loop failed; starting it again`, { error: words });
        try {
          crashed(words);
        } catch (again) {
          this.logger.error(`${this.platform}: cleaning up after the receive loop failed also failed`, { error: this.redact(describe(again)) });
        }
        await this.pause(RESTART_DELAY_MS, generation);
      }
    }
  }

  /** Stops the loop and everything of its generation; pauses and the long poll end at once. */
  stop(): void {
    this.isRunning = false;
    this.currentGeneration++;
    this.wakeAll();
    this.abortPoll();
  }

  /**
   * After a sleep the long poll's socket may be dead and a backoff may have
   * outlived the outage: both end now, and the loop polls again at once.
   */
  probe(): void {
    if (!this.isRunning) return;
    this.wakeForProbe();
    this.abortPoll();
  }

  /**
   * Stops the loop from inside it, for a reason trying again cannot mend (a
   * refused token, an unwritable data directory): the loop returns by itself,
   * and only connect() starts it again.
   */
  halt(): void {
    this.isRunning = false;
  }

  /** Sleeps `ms`, or less when the generation ends; `probeEnds: false` for a wait the service asked for (a 429). */
  pause(ms: number, generation: number, probeEnds = true): Promise<void> {
    if (generation !== this.currentGeneration) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const sleeper = {
        probeEnds,
        wake: () => {
          clearTimeout(timer);
          this.sleepers.delete(sleeper);
          resolve();
        },
      };
      const timer = setTimeout(sleeper.wake, Math.max(0, ms));
      this.sleepers.add(sleeper);
    });
  }

  /** Ends every pause (news arrived, the connection closed). */
  wakeAll(): void {
    for (const sleeper of [...this.sleepers]) sleeper.wake();
  }

  /** After a sleep: ends the pauses the adapter chose (a backoff), not the ones the service asked for. */
  wakeForProbe(): void {
    for (const sleeper of [...this.sleepers]) if (sleeper.probeEnds) sleeper.wake();
  }

  /** The signal for a long poll about to start: stop(), probe() and abortPoll() cut it short. */
  pollSignal(): AbortSignal {
    const poll = new AbortController();
    this.poll = poll;
    return poll.signal;
  }

  /** The poll of `signal` answered (or failed): nothing is left to cut short. */
  pollEnded(signal: AbortSignal): void {
    if (this.poll?.signal === signal) this.poll = undefined;
  }

  /** Cuts the long poll in flight short (Matrix: the session ended, so the loop logs in again now). */
  abortPoll(): void {
    this.poll?.abort();
    this.poll = undefined;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
