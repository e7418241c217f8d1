import { describe, expect, it } from 'vitest';
import type { ScheduleRow, ScheduleRunSummary, SessionSummary } from '../../../../shared/api';
import {
  absoluteTime,
  addParams,
  conversationChoices,
  EMPTY_FORM,
  fieldOfError,
  formFromRow,
  gatewayWords,
  lastRunWords,
  nextRunWords,
  relativeTime,
  shortBody,
  updateParams,
  whenInput,
  whenWords,
  whereWords,
} from './schedule-words';

const NOW = Date.UTC(2026, 11, 4, 16, 0);

function row(overrides: Partial<ScheduleRow> = {}): ScheduleRow {
  return {
    id: 7,
    name: 'Morning briefing',
    repeat: 'every',
    when: 'every day at 08:00',
    cron: '0 8 * * *',
    onceAt: null,
    zone: 'UTC',
    action: 'prompt',
    body: 'What is on today?',
    where: { sessionKey: 'agent:main:local:direct:local', platform: 'local', title: null },
    graceMinutes: 120,
    paused: false,
    nextRunAt: Date.UTC(2026, 11, 5, 8, 0),
    lastRun: null,
    createdAt: NOW - 86_400_000,
    createdVia: 'window',
    ...overrides,
  };
}

function run(overrides: Partial<ScheduleRunSummary> = {}): ScheduleRunSummary {
  return { dueAt: NOW - 60_000, reason: 'due', state: 'answered', missed: 0, obligationId: null, detail: null, finishedAt: NOW, ...overrides };
}

describe('what a schedule row says', () => {
  it('names the zone only when it is not the gateway’s', () => {
    expect(whenWords(row(), 'UTC')).toBe('every day at 08:00');
    expect(whenWords(row({ zone: 'Europe/Berlin' }), 'UTC')).toBe('every day at 08:00 (Europe/Berlin)');
    expect(whenWords(row({ zone: 'Europe/Berlin', when: 'every day at 08:00 (Europe/Berlin)' }), 'UTC')).toBe('every day at 08:00 (Europe/Berlin)');
  });

  it('says where: the window’s chat, or the conversation and its platform', () => {
    expect(whereWords(row().where)).toBe("this window's chat");
    expect(whereWords({ sessionKey: 'agent:main:telegram:direct:1', platform: 'telegram', title: 'Alice' })).toBe('Alice on Telegram');
    expect(whereWords({ sessionKey: 'agent:main:irc:channel:x', platform: 'irc', title: null })).toBe('a conversation on IRC');
  });

  it('cuts a long body to one line', () => {
    expect(shortBody('short')).toBe('short');
    expect(shortBody('line one\n\nline   two')).toBe('line one line two');
    const cut = shortBody('x'.repeat(300), 50);
    expect(cut).toHaveLength(50);
    expect(cut.endsWith('…')).toBe(true);
  });

  it('says how far a time is, both ways', () => {
    expect(relativeTime(NOW + 10_000, NOW)).toBe('now');
    expect(relativeTime(NOW - 10_000, NOW)).toBe('just now');
    expect(relativeTime(NOW + 60_000, NOW)).toBe('in 1 min');
    expect(relativeTime(NOW + 8 * 60_000, NOW)).toBe('in 8 min');
    expect(relativeTime(NOW + 3 * 3_600_000, NOW)).toBe('in 3 h');
    expect(relativeTime(NOW + 3 * 86_400_000, NOW)).toBe('in 3 days');
    expect(relativeTime(NOW - 5 * 60_000, NOW)).toBe('5 min ago');
  });

  it('gives the next run relative and absolute, in the gateway’s zone, or says it is paused', () => {
    expect(nextRunWords(row(), 'UTC', NOW, 'en-GB')).toBe('in 16 h · Sat 5 Dec, 08:00');
    expect(nextRunWords(row(), 'Europe/Berlin', NOW, 'en-GB')).toBe('in 16 h · Sat 5 Dec, 09:00');
    expect(nextRunWords(row({ paused: true, nextRunAt: null }), 'UTC', NOW)).toBe('paused');
    expect(nextRunWords(row({ repeat: 'once', nextRunAt: null, lastRun: run() }), 'UTC', NOW)).toBe('none — it has run');
    // Another year's time says its year; an unknown zone falls back instead of failing.
    expect(absoluteTime(Date.UTC(2027, 0, 2, 9, 30), 'UTC', NOW, 'en-GB')).toMatch(/^Sat,? 2 Jan 2027, 09:30$/);
    expect(absoluteTime(NOW, 'Not/AZone', NOW, 'en-GB')).toMatch(/Dec/);
  });

  it('says a last run’s outcome in words', () => {
    expect(lastRunWords(run({ state: 'running' }), 'prompt')).toEqual({ tone: 'busy', text: 'running… the agent is answering' });
    expect(lastRunWords(run(), 'prompt')).toEqual({ tone: 'ok', text: 'answered' });
    expect(lastRunWords(run({ reason: 'now' }), 'text')).toEqual({ tone: 'ok', text: 'sent (run by hand)' });
    expect(lastRunWords(run({ reason: 'late', missed: 2 }), 'prompt').text).toBe(
      'answered — late: this computer was asleep or Homing was closed (it stands for 2 missed runs)',
    );
    expect(lastRunWords(run({ state: 'failed', detail: 'the agent did not answer.' }), 'prompt')).toEqual({ tone: 'bad', text: 'failed: the agent did not answer.' });
    expect(lastRunWords(run({ state: 'skipped', reason: 'missed', missed: 3 }), 'prompt')).toEqual({
      tone: 'warn',
      text: 'missed — this computer was asleep or Homing was closed (3 times).',
    });
    expect(lastRunWords(run({ state: 'skipping', reason: 'missed', missed: 1 }), 'prompt').text).toBe(
      'missed — this computer was asleep or Homing was closed; telling the conversation….',
    );
  });
});

describe('the Where list', () => {
  const session = (sessionKey: string, platform: string, current = true): SessionSummary =>
    ({ sessionKey, platform, current, title: null, chat: `${platform}:abc`, sessionId: sessionKey }) as unknown as SessionSummary;
  it('offers each current conversation once, not the window’s own chat (it is the first choice)', () => {
    const choices = conversationChoices([session('local', 'local'), session('a', 'irc'), session('a', 'irc'), session('b', 'telegram', false), session('c', 'telegram')]);
    expect(choices.map((choice) => choice.sessionKey)).toEqual(['a', 'c']);
  });
});

describe('the form', () => {
  it('reads back what a schedule’s words say, in a form the gateway understands', () => {
    expect(whenInput(row())).toBe('day at 08:00');
    expect(whenInput(row({ when: 'every weekday at 07:45', cron: '45 7 * * 1-5' }))).toBe('weekday at 07:45');
    expect(whenInput(row({ when: 'every Monday and Thursday at 18:00', cron: '0 18 * * 1,4' }))).toBe('Monday and Thursday at 18:00');
    expect(whenInput(row({ when: 'every 15 minutes', cron: '*/15 * * * *' }))).toBe('15 minutes');
    expect(whenInput(row({ when: 'every minute (Europe/Berlin)', cron: '* * * * *' }))).toBe('minute');
    expect(whenInput(row({ when: 'every weekend day at 08:00', cron: '0 8 * * 0,6' }))).toBe('0 8 * * 0,6');
    expect(whenInput(row({ when: 'cron "0 8 1 * *"', cron: '0 8 1 * *' }))).toBe('0 8 1 * *');
    expect(whenInput(row({ repeat: 'once', cron: null, onceAt: Date.UTC(2026, 11, 24, 17, 0), zone: 'Europe/Berlin', when: 'once on 2026-12-24 at 18:00' }))).toBe(
      '2026-12-24 18:00',
    );
  });

  it('sends what was typed, trimmed; no sessionKey is this window’s chat', () => {
    expect(addParams({ ...EMPTY_FORM, when: ' day at 08:00 ', body: ' Hello ' })).toEqual({
      ok: true,
      params: { repeat: 'every', when: 'day at 08:00', action: 'prompt', body: 'Hello', graceMinutes: 120 },
    });
    expect(addParams({ ...EMPTY_FORM, name: 'N', repeat: 'once', when: 'in 10 minutes', action: 'text', body: 'Hi', sessionKey: 'k', grace: '0' })).toEqual({
      ok: true,
      params: { name: 'N', repeat: 'once', when: 'in 10 minutes', action: 'text', body: 'Hi', sessionKey: 'k', graceMinutes: 0 },
    });
  });

  it('names the field a form lacks, before asking the gateway', () => {
    expect(addParams({ ...EMPTY_FORM, body: 'x' })).toMatchObject({ ok: false, field: 'when' });
    expect(addParams({ ...EMPTY_FORM, when: 'hour', action: 'text' })).toEqual({ ok: false, field: 'body', error: 'write the text to send' });
    expect(addParams({ ...EMPTY_FORM, when: 'hour', body: 'x', grace: 'two' })).toMatchObject({ ok: false, field: 'grace' });
    expect(addParams({ ...EMPTY_FORM, when: 'hour', body: 'x', grace: '99999' })).toMatchObject({ ok: false, field: 'grace' });
  });

  it('sends only what an edit changed, repeat and when together', () => {
    const before = row();
    expect(updateParams(before, formFromRow(before))).toEqual({ ok: true, params: null });
    expect(updateParams(before, { ...formFromRow(before), body: 'Something else' })).toEqual({ ok: true, params: { id: 7, body: 'Something else' } });
    expect(updateParams(before, { ...formFromRow(before), when: 'weekday at 7:45' })).toEqual({ ok: true, params: { id: 7, repeat: 'every', when: 'weekday at 7:45' } });
    expect(updateParams(before, { ...formFromRow(before), name: 'Briefing', grace: '30' })).toEqual({ ok: true, params: { id: 7, name: 'Briefing', graceMinutes: 30 } });
  });

  it('finds the field a gateway error is about, and drops the method’s name', () => {
    expect(gatewayWords('addSchedule: when: say when')).toBe('when: say when');
    expect(fieldOfError('the time is not understood; say when like "day at 08:00"')).toBe('when');
    expect(fieldOfError('addSchedule: body: the prompt is empty')).toBe('body');
    expect(fieldOfError('addSchedule: graceMinutes: too big')).toBe('grace');
    expect(fieldOfError('something else')).toBeNull();
  });
});
