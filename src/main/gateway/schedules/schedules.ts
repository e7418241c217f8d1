import type { ApiParams, ScheduleRow } from '../../../shared/api';
import type { Clock } from '../clock';
import type { Db } from '../db/database';
import type { Logger } from '../logger';
import type { ScheduledRun, TurnOutcome } from '../pipeline/pipeline';
import { LOCAL_PLATFORM, localChatSource } from '../platforms/local/local-adapter';
import { toDisplayLine } from '../session/display-text';
import type { SessionReader } from '../session/session-reader';
import type { SessionStore } from '../session/store';
import { ScheduleStore, type Schedule, type ScheduleChange, type ScheduleRun } from './schedule-store';
import { Scheduler } from './scheduler';
import { checkZone, describeWhen, parseEvery, parseOnce, type When } from './when';

/** A run missed while asleep or closed runs late within this window; later, it is skipped with a line. */
export const DEFAULT_GRACE_MINUTES = 120;

/** Schedules at most (each is a row and a due time; nobody needs thousands). */
export const MAX_SCHEDULES = 200;

/** A schedule's prompt or text at most (as the API's addSchedule allows). */
const MAX_BODY = 10_000;

/** A schedule that cannot be made as asked, in words the window and the chat show as they are. */
export class ScheduleInputError extends Error {
  override readonly name = 'ScheduleInputError';
}

export interface SchedulesDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly sessions: () => SessionStore;
  readonly run: (run: ScheduledRun) => Promise<TurnOutcome>;
  readonly recordedReply: (sessionKey: string, messageRef: string) => string | undefined;
  /** The time zone a schedule is made in when none is given (the gateway's). */
  readonly zone: () => string;
  readonly onChange: () => void;
}

export type AddSchedule = Omit<ApiParams<'addSchedule'>, 'via'>;
export type UpdateSchedule = ApiParams<'updateSchedule'>;

/**
 * Schedules as the window, the CLI and the chat commands see them: made and
 * changed in words ("every day at 08:00"), listed with their next and last
 * run. The store keeps them (schedule-store.ts); the scheduler runs them
 * (scheduler.ts).
 */
export class Schedules {
  readonly store: ScheduleStore;
  readonly scheduler: Scheduler;

  constructor(private readonly deps: SchedulesDeps) {
    this.store = new ScheduleStore(deps.db);
    this.scheduler = new Scheduler({
      store: this.store,
      clock: deps.clock,
      logger: deps.logger,
      run: deps.run,
      recordedReply: deps.recordedReply,
      startWith: (schedule) => (schedule.platform === LOCAL_PLATFORM ? localChatSource() : undefined),
      onChange: deps.onChange,
    });
  }

  list(): ScheduleRow[] {
    const last = this.store.lastRuns();
    return this.store.list().map((schedule) => this.row(schedule, last.get(schedule.id)));
  }

  get(id: number): ScheduleRow {
    const schedule = this.store.get(id);
    if (!schedule) throw new ScheduleInputError(`there is no schedule ${id}`);
    return this.row(schedule, this.store.lastRuns().get(id));
  }

  /** The key of the window's own chat. */
  localKey(): string {
    return this.deps.sessions().sessionKeyFor(localChatSource());
  }

  add(input: AddSchedule, via: Schedule['createdVia']): ScheduleRow {
    if (this.store.list().length >= MAX_SCHEDULES) throw new ScheduleInputError(`there are ${MAX_SCHEDULES} schedules already; remove some first`);
    // The API checks these on arrival; a chat command's text is checked here.
    if (input.body.length > MAX_BODY) throw new ScheduleInputError(`the prompt is longer than ${MAX_BODY.toLocaleString('en')} characters`);
    const zone = input.zone ?? this.deps.zone();
    const when = this.parseWhen(input.repeat, input.when, zone);
    const where = this.where(input.sessionKey);
    const schedule = this.store.add(
      {
        name: input.name || nameFrom(input.body),
        when,
        action: input.action,
        body: input.body,
        sessionKey: where.sessionKey,
        platform: where.platform,
        graceMs: (input.graceMinutes ?? DEFAULT_GRACE_MINUTES) * 60_000,
        createdVia: via,
      },
      this.deps.clock.now(),
    );
    this.deps.logger.info('a schedule was made', { schedule: schedule.id, when: describeWhen(when), via });
    this.scheduler.changed();
    return this.row(schedule, undefined);
  }

  update(input: UpdateSchedule): ScheduleRow {
    const current = this.store.get(input.id);
    if (!current) throw new ScheduleInputError(`there is no schedule ${input.id}`);
    const change: { -readonly [K in keyof ScheduleChange]: ScheduleChange[K] } = {};
    if (input.name !== undefined) change.name = input.name || nameFrom(input.body ?? current.body);
    if (input.repeat !== undefined && input.when !== undefined) change.when = this.parseWhen(input.repeat, input.when, input.zone ?? current.when.zone);
    else if (input.zone !== undefined) {
      const error = checkZone(input.zone);
      if (error) throw new ScheduleInputError(error);
      change.when = { ...current.when, zone: input.zone };
    }
    if (input.action !== undefined) change.action = input.action;
    if (input.body !== undefined) change.body = input.body;
    if (input.graceMinutes !== undefined) change.graceMs = input.graceMinutes * 60_000;
    if (input.paused !== undefined) change.paused = input.paused;
    const updated = this.store.update(input.id, change, this.deps.clock.now());
    if (!updated) throw new ScheduleInputError(`there is no schedule ${input.id}`);
    this.scheduler.changed();
    return this.get(input.id);
  }

  remove(id: number): boolean {
    const removed = this.store.remove(id);
    if (removed) this.scheduler.changed();
    return removed;
  }

  /** Runs a schedule once, now (paused or not); its answer arrives in its conversation. */
  runNow(id: number): ScheduleRow {
    const schedule = this.store.get(id);
    if (!schedule) throw new ScheduleInputError(`there is no schedule ${id}`);
    this.scheduler.runNow(schedule);
    return this.get(id);
  }

  private parseWhen(repeat: AddSchedule['repeat'], text: string, zone: string): When {
    const parsed = repeat === 'every' ? parseEvery(text, zone) : parseOnce(text, zone, this.deps.clock.now());
    if (!parsed.ok) throw new ScheduleInputError(parsed.error);
    if (parsed.rest !== '') throw new ScheduleInputError(`"${parsed.rest}" after the time is not understood`);
    return parsed.when;
  }

  /** The conversation a schedule writes in: a known key (or session id), or the window's own chat. */
  private where(keyOrId: string | undefined): { sessionKey: string; platform: string } {
    if (keyOrId === undefined) return { sessionKey: this.localKey(), platform: LOCAL_PLATFORM };
    const found = this.deps.sessions().find(keyOrId);
    if (!found) throw new ScheduleInputError('no conversation has that key; pick one Homing knows (Conversations, or `homing sessions list`)');
    return { sessionKey: found.sessionKey, platform: found.platform };
  }

  private row(schedule: Schedule, last: ScheduleRun | undefined): ScheduleRow {
    return scheduleRow(schedule, last, this.deps.sessions());
  }
}

/** A schedule as the API shows it; its conversation's title from `sessions` (null when unknown). */
export function scheduleRow(schedule: Schedule, last: ScheduleRun | undefined, sessions: Pick<SessionReader, 'find'>): ScheduleRow {
  let title: string | null = null;
  try {
    title = schedule.platform === LOCAL_PLATFORM ? 'Local chat' : (sessions.find(schedule.sessionKey)?.title ?? null);
  } catch {
    title = null;
  }
  return {
    id: schedule.id,
    name: schedule.name,
    repeat: schedule.when.kind === 'cron' ? 'every' : 'once',
    when: describeWhen(schedule.when),
    cron: schedule.when.kind === 'cron' ? schedule.when.cron : null,
    onceAt: schedule.when.kind === 'once' ? schedule.when.at : null,
    zone: schedule.when.zone,
    action: schedule.action,
    body: schedule.body,
    where: { sessionKey: schedule.sessionKey, platform: schedule.platform, title },
    graceMinutes: Math.round(schedule.graceMs / 60_000),
    paused: schedule.paused,
    nextRunAt: schedule.paused ? null : schedule.nextDueAt,
    lastRun: last
      ? { dueAt: last.dueAt, reason: last.reason, state: last.state, missed: last.missed, obligationId: last.obligationId, detail: last.detail, finishedAt: last.finishedAt }
      : null,
    createdAt: schedule.createdAt,
    createdVia: schedule.createdVia,
  };
}

/** A schedule's name when none is given: the start of its prompt. */
export function nameFrom(body: string): string {
  return toDisplayLine(body, 40) || 'Schedule';
}
