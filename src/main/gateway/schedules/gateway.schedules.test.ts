import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ScheduleRow, TranscriptPage } from '../../../shared/api';
import type { Clock } from '../clock';
import { Gateway } from '../gateway';
import { silentLogger } from '../logger';
import { waitUntil } from '../../../../test/support/wait';

/**
 * Schedules through a real gateway (its database, pipeline, ledger and the
 * window's own chat with the built-in agent), on a wall clock the test sets:
 * the scheduler is woken as the sleep detector wakes it (`wake('asleep')`
 * after a sleep, `wake('clock')` after the clock was set) or as its timer does.
 */

const ZONE = 'Europe/Berlin';

/** A wall clock the test sets; monotonic time runs on (the gateway's timers are real). */
class SetClock implements Clock {
  constructor(public time: number) {}
  now(): number {
    return this.time;
  }
  monotonic(): number {
    return performance.now();
  }
}

let dataDir: string | undefined;
let gateway: Gateway | undefined;

afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

async function start(at: number): Promise<{ gateway: Gateway; clock: SetClock }> {
  dataDir = mkdtempSync(join(tmpdir(), 'homing-schedules-'));
  const clock = new SetClock(at);
  gateway = Gateway.start({ dataDir, mode: 'app', version: '0.0.0-test', logger: silentLogger, clock, detectSleep: false, detectOllama: false });
  await gateway.ready;
  return { gateway, clock };
}

async function call<T>(method: string, params?: unknown): Promise<T> {
  const result = (await gateway!.api.dispatch(method as never, params as never)) as { ok: boolean; value?: T; error?: { message: string } };
  if (!result.ok) throw new Error(`${method}: ${result.error?.message}`);
  return result.value as T;
}

async function schedule(id: number): Promise<ScheduleRow> {
  const { schedules } = await call<{ schedules: ScheduleRow[] }>('listSchedules');
  const row = schedules.find((candidate) => candidate.id === id);
  if (!row) throw new Error(`no schedule ${id}`);
  return row;
}

/** The window's own chat, as its transcript reads. */
async function localChat(): Promise<TranscriptPage['messages']> {
  const session = gateway!.sessions.find(gateway!.schedules.localKey());
  if (!session) return [];
  return (await call<TranscriptPage>('getTranscript', { sessionId: session.sessionId, pageSize: 500 })).messages;
}

/** Lets every run the scheduler started finish, and its replies be recorded. */
async function settled(): Promise<void> {
  await gateway!.schedules.scheduler.idle();
}

function berlin(day: string, time: string): number {
  // Winter time (UTC+1) unless the test says otherwise with an explicit instant.
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  const [hour, minute] = time.split(':').map(Number) as [number, number];
  return Date.UTC(year, month - 1, date, hour - 1, minute);
}

describe('a schedule through the gateway', () => {
  it('runs at its time: the prompt is saved as a scheduled message, the agent answers in the local chat, the run says answered', async () => {
    const { gateway, clock } = await start(berlin('2026-12-03', '07:59'));
    const made = await call<ScheduleRow>('addSchedule', { repeat: 'every', when: 'day at 08:00', zone: ZONE, action: 'prompt', body: 'Give me a short briefing' });
    expect(made).toMatchObject({ when: 'every day at 08:00', zone: ZONE, nextRunAt: berlin('2026-12-03', '08:00'), where: { platform: 'local' }, paused: false, lastRun: null });

    clock.time = berlin('2026-12-03', '08:00') + 2_000;
    await gateway.schedules.scheduler.wake('clock');
    await settled();
    const row = await schedule(made.id);
    expect(row.lastRun).toMatchObject({ dueAt: berlin('2026-12-03', '08:00'), reason: 'due', state: 'answered', missed: 0, obligationId: expect.stringMatching(/^[0-9a-f]{24}$/) });
    expect(row.nextRunAt).toBe(berlin('2026-12-04', '08:00'));
    const turns = await localChat();
    const prompt = turns.find((turn) => turn.role === 'user' && turn.text === 'Give me a short briefing');
    expect(prompt).toBeDefined();
    expect(turns.filter((turn) => turn.role === 'assistant' && turn.obligationId === row.lastRun!.obligationId)).toHaveLength(1);

    // Woken again at the same time (a second wake, a clock set back to before it): nothing runs twice.
    await gateway.schedules.scheduler.wake('asleep');
    clock.time = berlin('2026-12-03', '07:30');
    await gateway.schedules.scheduler.wake('clock');
    clock.time = berlin('2026-12-03', '08:00') + 30_000;
    await gateway.schedules.scheduler.wake('clock');
    await settled();
    expect((await localChat()).filter((turn) => turn.role === 'user' && turn.text === 'Give me a short briefing')).toHaveLength(1);
  });

  it('a run missed while asleep runs once on wake within the grace window, and is skipped with a line beyond it', async () => {
    const { gateway, clock } = await start(berlin('2026-12-03', '07:00'));
    const within = await call<ScheduleRow>('addSchedule', { name: 'morning briefing', repeat: 'every', when: 'day at 08:00', zone: ZONE, action: 'prompt', body: 'briefing please' });
    const beyond = await call<ScheduleRow>('addSchedule', { name: 'early check', repeat: 'every', when: 'day at 07:30', zone: ZONE, action: 'prompt', body: 'early check please', graceMinutes: 60 });

    // Asleep from 07:10 to 09:45: 08:00 is 1 h 45 min late (grace 2 h), 07:30 is 2 h 15 min late (grace 1 h).
    clock.time = berlin('2026-12-03', '09:45');
    await gateway.schedules.scheduler.wake('asleep');
    await gateway.schedules.scheduler.wake('asleep');
    await settled();

    expect((await schedule(within.id)).lastRun).toMatchObject({ reason: 'late', state: 'answered' });
    expect((await schedule(beyond.id)).lastRun).toMatchObject({ reason: 'missed', state: 'skipped', missed: 1, detail: 'this computer was asleep' });
    const turns = await localChat();
    expect(turns.filter((turn) => turn.role === 'user' && turn.text === 'briefing please')).toHaveLength(1);
    expect(turns.filter((turn) => turn.role === 'user' && turn.text === 'early check please')).toHaveLength(0);
    const skipped = turns.filter((turn) => turn.role === 'assistant' && turn.text.startsWith('⏰ Skipped'));
    expect(skipped.map((turn) => turn.text)).toEqual(['⏰ Skipped the 07:30 run of “early check”: this computer was asleep.']);
  });

  it('says how many runs a long sleep skipped, and runs only the latest when it is within the grace window', async () => {
    const { gateway, clock } = await start(berlin('2026-12-03', '09:50'));
    const hourly = await call<ScheduleRow>('addSchedule', { name: 'hourly', repeat: 'every', when: 'hour', zone: ZONE, action: 'text', body: 'stand up and stretch' });
    clock.time = berlin('2026-12-03', '14:10');
    await gateway.schedules.scheduler.wake('asleep');
    await settled();
    const turns = await localChat();
    expect(turns.filter((turn) => turn.role === 'assistant' && turn.text === 'stand up and stretch')).toHaveLength(1);
    expect(turns.filter((turn) => turn.role === 'assistant' && turn.text.startsWith('⏰')).map((turn) => turn.text)).toEqual([
      '⏰ Skipped 4 runs of “hourly” (the last at 13:00): this computer was asleep.',
    ]);
    expect((await schedule(hourly.id)).lastRun).toMatchObject({ dueAt: berlin('2026-12-03', '14:00'), reason: 'late', state: 'answered', missed: 4 });
  });

  it('a paused schedule does not run, and resumed it goes on from now without owing what it passed', async () => {
    const { gateway, clock } = await start(berlin('2026-12-03', '07:00'));
    const made = await call<ScheduleRow>('addSchedule', { repeat: 'every', when: 'day at 08:00', zone: ZONE, action: 'prompt', body: 'paused prompt' });
    expect(await call<ScheduleRow>('updateSchedule', { id: made.id, paused: true })).toMatchObject({ paused: true, nextRunAt: null });
    clock.time = berlin('2026-12-03', '08:30');
    await gateway.schedules.scheduler.wake('clock');
    await settled();
    expect((await schedule(made.id)).lastRun).toBeNull();
    expect(await call<ScheduleRow>('updateSchedule', { id: made.id, paused: false })).toMatchObject({ paused: false, nextRunAt: berlin('2026-12-04', '08:00') });
    await gateway.schedules.scheduler.wake('clock');
    await settled();
    expect((await localChat()).some((turn) => turn.text.includes('paused prompt') || turn.text.startsWith('⏰'))).toBe(false);

    // Run now runs it once, paused or not, and leaves its next time alone.
    const ran = await call<ScheduleRow>('runScheduleNow', { id: made.id });
    expect(ran.lastRun).toMatchObject({ reason: 'now', state: 'running' });
    await settled();
    expect(await schedule(made.id)).toMatchObject({ lastRun: { reason: 'now', state: 'answered' }, nextRunAt: berlin('2026-12-04', '08:00') });
  });

  it('fires a daily 02:30 run once on the spring-forward day and once on the fall-back day', async () => {
    const { gateway, clock } = await start(Date.UTC(2026, 2, 27, 12, 0));
    const made = await call<ScheduleRow>('addSchedule', { repeat: 'every', when: 'day at 02:30', zone: ZONE, action: 'text', body: 'night run' });
    const ran: number[] = [];
    // Wake every 10 minutes of wall-clock time through four days around each change.
    for (const [from, days] of [
      [Date.UTC(2026, 2, 27, 12, 0), 4],
      [Date.UTC(2026, 9, 23, 12, 0), 4],
    ] as const) {
      if (clock.time < from) {
        // Between the two stretches the machine "was off": the rule skips what it missed, with a line.
        clock.time = from;
        await gateway.schedules.scheduler.wake('clock');
        await settled();
      }
      for (let at = from; at <= from + days * 86_400_000; at += 600_000) {
        clock.time = at;
        await gateway.schedules.scheduler.wake('clock');
        const last = (await schedule(made.id)).lastRun;
        if (last && last.reason === 'due' && !ran.includes(last.dueAt)) ran.push(last.dueAt);
      }
    }
    await settled();
    expect(ran.map((at) => new Date(at).toISOString())).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:30:00.000Z', // 03:30 summer time: 02:30 does not exist that night
      '2026-03-30T00:30:00.000Z',
      '2026-03-31T00:30:00.000Z',
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:30:00.000Z', // the first 02:30 of the night it happens twice
      '2026-10-26T01:30:00.000Z',
      '2026-10-27T01:30:00.000Z',
    ]);
    const texts = (await localChat()).filter((turn) => turn.role === 'assistant').map((turn) => turn.text);
    expect(texts.filter((text) => text === 'night run')).toHaveLength(8);
  });

  it("keeps each schedule in its own zone when the machine's zone changes: nothing runs twice, nothing is skipped", async () => {
    const saved = process.env.TZ;
    try {
      process.env.TZ = 'Europe/Berlin';
      const { gateway, clock } = await start(berlin('2026-12-03', '07:00'));
      const made = await call<ScheduleRow>('addSchedule', { repeat: 'every', when: 'day at 08:00', action: 'text', body: 'zone check' });
      expect(made.zone).toBe('Europe/Berlin');
      clock.time = berlin('2026-12-03', '08:00') + 1_000;
      await gateway.schedules.scheduler.wake('clock');
      await settled();
      // Flown to New York: 08:00 there is still ahead today, but the schedule is Berlin's.
      process.env.TZ = 'America/New_York';
      clock.time = berlin('2026-12-03', '14:00') + 1_000;
      await gateway.schedules.scheduler.wake('clock');
      clock.time = berlin('2026-12-04', '08:00') + 1_000;
      await gateway.schedules.scheduler.wake('clock');
      await settled();
      expect((await localChat()).filter((turn) => turn.text === 'zone check')).toHaveLength(2);
      expect((await schedule(made.id)).nextRunAt).toBe(berlin('2026-12-05', '08:00'));
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  it('makes schedules from the local chat with /every and /once, lists them with /schedules, and answers a bad time in words', async () => {
    const { gateway } = await start(berlin('2026-12-03', '07:00'));
    await call('sendLocalMessage', { text: '/every weekday at 7:45 What is on my calendar?' });
    await call('sendLocalMessage', { text: '/once in 2 hours Remind me to stretch' });
    await call('sendLocalMessage', { text: '/every someday do things' });
    await call('sendLocalMessage', { text: '/schedules' });
    await waitUntil('four answers', async () => (await localChat()).filter((turn) => turn.role === 'assistant').length >= 4);
    const answers = (await localChat()).filter((turn) => turn.role === 'assistant').map((turn) => turn.text);
    expect(answers[0]).toMatch(/^⏰ Scheduled “What is on my calendar\?”: every weekday at 07:45 \(.+\); next run /);
    expect(answers[1]).toMatch(/^⏰ Scheduled “Remind me to stretch”: once on 2026-12-03 at \d\d:00/);
    expect(answers[2]).toMatch(/^⚠ The time is not understood.*\nUse: \/every <when> <prompt>/s);
    // Soonest next run first: 07:45 today, then two hours from 07:00 (in the machine's zone).
    expect(answers[3]).toMatch(/^Schedules:\n#1 “What is on my calendar\?” — every weekday at 07:45 \(next 07:45\)\n#2 “Remind me to stretch” — once on 2026-12-03 at \d\d:00 \(next \d\d:00\)\n/);
    const { schedules } = await call<{ schedules: ScheduleRow[] }>('listSchedules');
    expect(schedules.map((row) => [row.id, row.createdVia, row.action, row.body])).toEqual([
      [1, 'chat', 'prompt', 'What is on my calendar?'],
      [2, 'chat', 'prompt', 'Remind me to stretch'],
    ]);
    // The commands are Homing's: the agent never saw them.
    expect(gateway.pipeline.turnsRunning).toBe(0);
  });

  it('moves a schedule to another time zone when edited: its next run is that zone’s 08:00', async () => {
    await start(berlin('2026-12-03', '07:00'));
    const made = await call<ScheduleRow>('addSchedule', { repeat: 'every', when: 'day at 08:00', zone: ZONE, action: 'text', body: 'x' });
    const moved = await call<ScheduleRow>('updateSchedule', { id: made.id, zone: 'America/New_York' });
    expect(moved).toMatchObject({ zone: 'America/New_York', when: 'every day at 08:00', nextRunAt: Date.UTC(2026, 11, 3, 13, 0) });
    expect(await gateway!.api.dispatch('updateSchedule', { id: made.id, zone: 'Atlantis/Lost' })).toMatchObject({ ok: false, error: { code: 'bad-request', message: expect.stringMatching(/not a time zone/) } });
  });

  it('refuses what cannot be a schedule, in words', async () => {
    await start(berlin('2026-12-03', '07:00'));
    const bad = async (params: object) => (await gateway!.api.dispatch('addSchedule', params as never)) as { ok: boolean; error?: { code: string; message: string } };
    expect(await bad({ repeat: 'every', when: 'day at 08:00 extra words', action: 'prompt', body: 'x' })).toMatchObject({ ok: false, error: { code: 'bad-request', message: expect.stringMatching(/"extra words" after the time is not understood/) } });
    expect(await bad({ repeat: 'every', when: 'day at 08:00', zone: 'Nowhere/Land', action: 'prompt', body: 'x' })).toMatchObject({ ok: false, error: { message: expect.stringMatching(/not a time zone/) } });
    expect(await bad({ repeat: 'every', when: 'day at 08:00', action: 'prompt', body: 'x', sessionKey: 'agent:main:telegram:direct:nobody' })).toMatchObject({ ok: false, error: { message: expect.stringMatching(/no conversation has that key/) } });
    expect(await bad({ repeat: 'once', when: '2020-01-01 08:00', action: 'prompt', body: 'x' })).toMatchObject({ ok: false, error: { message: expect.stringMatching(/has passed/) } });
    expect(await gateway!.api.dispatch('updateSchedule', { id: 99 })).toMatchObject({ ok: false, error: { message: 'there is no schedule 99' } });
    // From a chat, where no API schema stands before it: the same limit, in words.
    expect(() => gateway!.schedules.add({ repeat: 'every', when: 'hour', action: 'prompt', body: 'x'.repeat(10_001) }, 'chat')).toThrow(/longer than 10,000 characters/);
  });
});
