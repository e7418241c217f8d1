/** An fdatasync of a file (node:fs's; a test's counting or failing disk stands in for it). */
export type SyncFile = (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => void;

/**
 * One sync at a time, shared: a sync covers what was written before it
 * started, so a caller that asks while one runs waits for one more, started
 * when it ends — and every caller that asks meanwhile shares that one. A burst
 * of writers costs two syncs, however many wrote. (The database's log,
 * log-sync.ts, and each transcript, session/transcript-file.ts.)
 */
export class SharedSync {
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(private readonly start: () => Promise<void>) {}

  /** Resolves once a sync started after this call has ended; rejects with its error. */
  sync(): Promise<void> {
    if (this.next) return this.next;
    if (!this.running) return this.run();
    const next = this.running.then(noop, noop).then(() => {
      this.next = undefined;
      return this.run();
    });
    this.next = next;
    return next;
  }

  /** The last sync asked for, while one runs or waits to (settles when every sync asked for so far has). */
  get pending(): Promise<void> | undefined {
    return this.next ?? this.running;
  }

  private run(): Promise<void> {
    let run: Promise<void>;
    try {
      run = this.start();
    } catch (error) {
      return Promise.reject(error);
    }
    this.running = run;
    const settled = () => {
      if (this.running === run) this.running = undefined;
    };
    run.then(settled, settled);
    return run;
  }
}

function noop(): void {}
