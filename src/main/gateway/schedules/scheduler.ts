import type { Clock } from '../clock';
import type { Logger } from '../logger';
import type { ScheduledRun, TurnOutcome } from '../pipeline/pipeline';
import type { Schedule, ScheduleRun, ScheduleStore } from './schedule-store';
import { describeDue, describeWhen, dueBetween, latestDue } from './when';

/** Why runs were missed, as the conversation is told. */
export type MissedBecause = 'asleep' | 'not-running' | 'clock' | 'busy';

const MISSED_WORDS: Readonly<Record<MissedBecause, string>> = {
  asleep: 'this computer was asleep',
  'not-running': 'Homing was not running',
  clock: "the computer's clock was changed",
  busy: 'Homing was too busy to start it in time',
};

export interface SchedulerOptions {
  readonly store: ScheduleStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Hands a run to the pipeline (Pipeline.runScheduled). */
  readonly run: (run: ScheduledRun) => Promise<TurnOutcome>;
  /** The reply already recorded for a run's message, if any (after a restart). */
  readonly recordedReply: (sessionKey: string, messageRef: string) => string | undefined;
  /** Where a schedule of the window's own chat starts its conversation when it has none yet. */
  readonly startWith: (schedule: Schedule) => ScheduledRun['startWith'];
  /** A schedule was made, changed, or one of its runs began or ended. */
  readonly onChange: () => void;
  /** The latest a due time may be handled and still count as on time (default 60 s: a late timer, a short stall). */
  readonly onTimeMs?: number;
  /** The longest the timer waits before looking again (default 15 min: a wall clock set forward is noticed by then). */
  readonly maxWaitMs?: number;
}

/**
 * Runs schedules at their due times with one timer, set for the soonest due
 * time (nothing polls: an idle gateway with ten schedules wakes up when one is
 * due, and at most every `maxWaitMs`).
 *
 * A due time is handled once: its run is recorded (schedule_runs, fsynced)
 * together with the schedule's next due time before the pipeline is asked, so
 * a crash after it leaves a run the next start finishes (its prompt saved, or
 * saved now, and answered once), and never a due time run twice — the run's
 * key is (schedule, due time), and due times are counted after the last one
 * handled, not from the clock, so a clock set back brings none round again.
 *
 * Missed runs (asleep, closed, a clock set forward): on start, on wake and
 * when the timer finds due times in the past, the latest missed due time runs
 * late once when it is within the schedule's grace window; otherwise it is
 * skipped and the conversation is told, in one line, how many were missed and
 * why. Never silently.
 */
export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** A catch-up in progress: the next one waits for it (runs never overlap their own records). */
  private working: Promise<void> = Promise.resolve();
  private readonly running = new Set<Promise<unknown>>();

  constructor(private readonly options: SchedulerOptions) {}

  /** Finishes runs a previous process left open, handles what was missed while Homing was not running, and arms the timer. */
  start(): Promise<void> {
    this.resumeOpenRuns();
    return this.catchUp('not-running');
  }

  /** The machine woke up, or its clock jumped: handle what was missed, and arm the timer again. */
  wake(because: 'asleep' | 'clock'): Promise<void> {
    return this.catchUp(because);
  }

  /** A schedule was made or changed: the timer may need to come sooner. */
  changed(): void {
    this.options.onChange();
    this.arm();
  }

  /**
   * Runs `schedule` now, once, whatever its next due time (which stays).
   * Resolves once the run is recorded; its answer comes in its conversation.
   */
  runNow(schedule: Schedule): ScheduleRun {
    let at = this.options.clock.now();
    // The run's key is its due time: "now" twice in one millisecond takes the next one.
    for (;;) {
      const run = this.options.store.startRun(schedule, { dueAt: at, reason: 'now', state: 'running', missed: 0 }, at, at);
      if (run) {
        this.fire(schedule, run);
        this.options.onChange();
        return run;
      }
      at += 1;
    }
  }

  /** Stops the timer; runs in progress finish (or are finished by the next start). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Resolves once every run started so far has finished (tests, and a stop that waits). */
  async idle(): Promise<void> {
    await this.working;
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private arm(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    let soonest: number | undefined;
    try {
      soonest = this.options.store.soonestDue();
    } catch (error) {
      this.options.logger.error('the schedules could not be read; trying again in a minute', { error });
      soonest = this.options.clock.now() + 60_000;
    }
    if (soonest === undefined) return;
    const wait = Math.min(Math.max(0, soonest - this.options.clock.now()), this.options.maxWaitMs ?? 15 * 60_000);
    this.timer = setTimeout(() => void this.catchUp('busy'), wait);
    this.timer.unref();
  }

  /** Handles every schedule due by now, then arms the timer; one at a time. */
  private catchUp(because: MissedBecause): Promise<void> {
    const next = this.working.then(() => {
      if (this.stopped) return;
      try {
        this.handleDue(because);
      } catch (error) {
        this.options.logger.error('the schedules could not be run', { error });
      }
      this.arm();
    });
    this.working = next.catch(() => undefined);
    return next;
  }

  private handleDue(because: MissedBecause): void {
    const { store, clock } = this.options;
    const now = clock.now();
    let changed = false;
    for (const schedule of store.due(now)) {
      const first = schedule.nextDueAt!;
      // Every due time from the first one owed through now (counted, not listed: a minutely schedule after a week asleep).
      const { latest, count, more } = dueBetween(schedule.when, first - 1, now);
      const last = latest ?? first;
      const missed = Math.max(0, count - 1);
      const late = now - last;
      const onTime = late <= (this.options.onTimeMs ?? 60_000);
      changed = true;
      if (onTime || late <= schedule.graceMs) {
        const reason = onTime && missed === 0 ? 'due' : 'late';
        if (missed > 0) this.skip(schedule, { count: missed, more, latest: previousDue(schedule, first, last), because }, last, now);
        const run = store.startRun(schedule, { dueAt: last, reason, state: 'running', missed }, last, now);
        if (run) {
          this.options.logger.info('a schedule is due', { schedule: schedule.id, late: reason === 'late', missed });
          this.fire(schedule, run);
        }
      } else {
        this.skip(schedule, { count: count || 1, more, latest: last, because }, last, now);
      }
    }
    if (changed) {
      store.prune();
      this.options.onChange();
    }
  }

  /** Records due times that will not run (one row, for the latest of them) and tells the conversation. */
  private skip(schedule: Schedule, missed: { count: number; more: boolean; latest: number; because: MissedBecause }, handledThrough: number, now: number): void {
    const line = skippedLine(schedule, missed.count, missed.latest, MISSED_WORDS[missed.because], now, missed.more);
    const run = this.options.store.startRun(schedule, { dueAt: missed.latest, reason: 'missed', state: 'skipping', missed: missed.count, detail: MISSED_WORDS[missed.because] }, handledThrough, now);
    this.options.logger.info('a schedule missed its time', { schedule: schedule.id, missed: missed.count, because: missed.because });
    if (run) this.fire(schedule, run, line);
  }

  /**
   * Hands a recorded run to the pipeline and records what became of it. A
   * skipped run's line is a notice; a prompt is answered by the agent; a text
   * is delivered as it is.
   */
  private fire(schedule: Schedule, run: ScheduleRun, skippedText?: string): void {
    const { store, clock, logger } = this.options;
    const when = describeWhen(schedule.when);
    const as = run.state === 'skipping' ? 'notice' : schedule.action;
    const messageRef = run.state === 'skipping' ? `${run.messageRef}#skipped` : run.messageRef;
    const text = skippedText ?? (run.state === 'skipping' ? skippedLine(schedule, run.missed, run.dueAt, run.detail ?? MISSED_WORDS['not-running'], clock.now()) : schedule.body);
    const finish = (outcome: Parameters<ScheduleStore['finishRun']>[2]) => {
      try {
        store.finishRun(schedule.id, run.dueAt, outcome, clock.now());
      } catch (error) {
        logger.error("a schedule's run could not be marked finished; the next start looks at it again", { schedule: schedule.id, error });
      }
      this.options.onChange();
    };
    let work: Promise<unknown>;
    try {
      work = this.options
        .run({
          sessionKey: schedule.sessionKey,
          messageRef,
          text,
          as,
          schedule: { id: schedule.id, name: schedule.name, when },
          startWith: this.options.startWith(schedule),
        })
        .then(
          (outcome) => {
            // The gateway is stopping: the run stays open, and the next start finishes it.
            if (outcome.deferred) return;
            const obligationId = outcome.obligationId ?? this.options.recordedReply(schedule.sessionKey, messageRef);
            if (run.state === 'skipping') finish({ state: 'skipped', obligationId });
            else if (outcome.kind === 'answered' || outcome.kind === 'command') finish({ state: 'answered', obligationId });
            else if (outcome.kind === 'ignored') finish(obligationId ? { state: 'answered', obligationId } : { state: 'answered', detail: 'answered after a restart' });
            else finish({ state: 'failed', obligationId, detail: outcome.kind === 'cancelled' ? 'the answer was cancelled' : 'the agent failed; its error is in the conversation' });
          },
          (error: unknown) => finish({ state: 'failed', detail: errorWords(error) }),
        );
    } catch (error) {
      finish({ state: run.state === 'skipping' ? 'skipped' : 'failed', detail: errorWords(error) });
      return;
    }
    this.running.add(work);
    void work.finally(() => this.running.delete(work));
  }

  /** Runs a previous process recorded and did not finish: their prompt is saved (or saved now) and answered once. */
  private resumeOpenRuns(): void {
    const { store, logger } = this.options;
    let open: ScheduleRun[];
    try {
      open = store.openRuns();
    } catch (error) {
      logger.error('the schedules could not be read', { error });
      return;
    }
    for (const run of open) {
      const schedule = store.get(run.scheduleId);
      if (!schedule) continue;
      logger.info("finishing a schedule's run a previous start began", { schedule: schedule.id });
      this.fire(schedule, run);
    }
  }
}

/** "⏰ Skipped the 08:00 run of “Morning briefing”: this computer was asleep." */
export function skippedLine(schedule: Pick<Schedule, 'name' | 'when'>, count: number, latest: number, because: string, now: number, more = false): string {
  const at = describeDue(latest, schedule.when.zone, now);
  const what = count > 1 || more ? `${more ? `more than ${count}` : count} runs of “${schedule.name}” (the last at ${at})` : `the ${at} run of “${schedule.name}”`;
  return `⏰ Skipped ${what}: ${because}.`;
}

/** The due time before `last` (at or after `first`): the latest of the earlier ones a late run skips. */
function previousDue(schedule: Schedule, first: number, last: number): number {
  const latest = latestDue(schedule.when, last - 1);
  return latest !== undefined && latest >= first ? latest : first;
}

function errorWords(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
