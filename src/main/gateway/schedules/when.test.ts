import { describe, expect, it } from 'vitest';
import { describeWhen, dueBetween, localParts, nextDue, parseEvery, parseOnce, zonedTime, type When } from './when';

const BERLIN = 'Europe/Berlin';
const NEW_YORK = 'America/New_York';

function cronOf(text: string, zone = BERLIN): { cron: string; rest: string } {
  const parsed = parseEvery(text, zone);
  if (!parsed.ok) throw new Error(parsed.error);
  if (parsed.when.kind !== 'cron') throw new Error('not a cron');
  return { cron: parsed.when.cron, rest: parsed.rest };
}

/** The wall-clock reading of `at` in `zone`, as `YYYY-MM-DD HH:MM`. */
function local(at: number, zone = BERLIN): string {
  const parts = localParts(at, zone);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${parts.year}-${pad(parts.month)}-${pad(parts.day)} ${pad(parts.hour)}:${pad(parts.minute)}`;
}

describe('parseEvery', () => {
  it.each([
    ['day at 08:00 Give me a briefing', '0 8 * * *', 'Give me a briefing'],
    ['every day at 8:00 briefing', '0 8 * * *', 'briefing'],
    ['daily 7:45pm x', '45 19 * * *', 'x'],
    ['weekday at 7:45 news', '45 7 * * 1-5', 'news'],
    ['monday 09:30 weekly review', '30 9 * * 1', 'weekly review'],
    ['mon, thu at 18:00 gym', '0 18 * * 1,4', 'gym'],
    ['tuesday and friday at noon lunch', '0 12 * * 2,5', 'lunch'],
    ['weekend at 10:00 relax', '0 10 * * 0,6', 'relax'],
    ['hour check the mail', '0 * * * *', 'check the mail'],
    ['15 minutes stretch', '*/15 * * * *', 'stretch'],
    ['2 hours drink water', '0 */2 * * *', 'drink water'],
    ['0 8 * * 1-5 standup notes', '0 8 * * 1-5', 'standup notes'],
    ['"30 6 1 * *" pay the rent', '30 6 1 * *', 'pay the rent'],
    ['30 seconds ping', '*/30 * * * * *', 'ping'],
    ['"*/5 * * * * *" ping', '*/5 * * * * *', 'ping'],
  ])('reads %j', (text, cron, rest) => {
    expect(cronOf(text)).toEqual({ cron, rest });
  });

  it.each([
    ['day briefing', /at what time/],
    ['7 minutes x', /does not divide the hour/],
    ['someday at 08:00 x', /not understood/],
    ['day at 25:00 x', /at what time/],
    ['"61 8 * * *" x', /not a cron pattern/],
  ])('refuses %j in words', (text, error) => {
    const parsed = parseEvery(text, BERLIN);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(error);
  });

  it('comes back from hostile texts with a reading or a refusal (the day words are whole words)', () => {
    expect(parseEvery('monand'.repeat(33) + 'X', BERLIN).ok).toBe(false);
    for (const text of ['monand'.repeat(33) + 'X', 'mon,'.repeat(50) + 'X', 'mon and '.repeat(25) + 'X', '1'.repeat(200), '* '.repeat(100), '"'.repeat(200)]) {
      // Read or refused — what matters is that it comes back (a backtracking pattern would not, for minutes).
      expect(typeof parseEvery(text, BERLIN).ok).toBe('boolean');
      expect(typeof parseOnce(text, BERLIN, Date.UTC(2026, 0, 1)).ok).toBe('boolean');
    }
  });

  it('refuses a zone that does not exist', () => {
    const parsed = parseEvery('day at 08:00 x', 'Mars/Olympus');
    expect(parsed).toEqual({ ok: false, error: expect.stringMatching(/not a time zone/) });
  });
});

describe('parseOnce', () => {
  // Thursday 2026-12-03 10:00 in Berlin.
  const now = Date.UTC(2026, 11, 3, 9, 0);

  it('reads a time of day as its next occurrence: today, else tomorrow', () => {
    const later = parseOnce('14:30 call mom', BERLIN, now);
    expect(later.ok && local(later.when.kind === 'once' ? later.when.at : 0)).toBe('2026-12-03 14:30');
    const earlier = parseOnce('at 8am call mom', BERLIN, now);
    expect(earlier.ok && earlier.when.kind === 'once' && local(earlier.when.at)).toBe('2026-12-04 08:00');
    expect(earlier.ok && earlier.rest).toBe('call mom');
  });

  it('reads dates, tomorrow and relative times', () => {
    const at = (text: string) => {
      const parsed = parseOnce(text, BERLIN, now);
      if (!parsed.ok || parsed.when.kind !== 'once') throw new Error(parsed.ok ? 'not once' : parsed.error);
      return [local(parsed.when.at), parsed.rest];
    };
    expect(at('tomorrow at 9:00 bank')).toEqual(['2026-12-04 09:00', 'bank']);
    expect(at('2026-12-24 18:00 presents')).toEqual(['2026-12-24 18:00', 'presents']);
    expect(at('on 2026-12-24 at 6pm presents')).toEqual(['2026-12-24 18:00', 'presents']);
    expect(at('in 10 minutes tea')).toEqual(['2026-12-03 10:10', 'tea']);
    expect(at('in 2 hours tea')).toEqual(['2026-12-03 12:00', 'tea']);
    expect(at('in 90 seconds tea')).toEqual(['2026-12-03 10:01', 'tea']);
  });

  it('refuses a time that has passed, and one it does not understand', () => {
    expect(parseOnce('2026-12-01 08:00 x', BERLIN, now)).toEqual({ ok: false, error: expect.stringMatching(/has passed/) });
    expect(parseOnce('soon x', BERLIN, now)).toEqual({ ok: false, error: expect.stringMatching(/not understood/) });
  });
});

describe('due times across daylight saving time', () => {
  const daily0230: When = { kind: 'cron', cron: '30 2 * * *', zone: BERLIN };

  it('a 02:30 daily run fires once on the spring-forward day (at 03:30, the hour 02:00–03:00 does not exist)', () => {
    const from = Date.UTC(2026, 2, 27, 12, 0); // 2026-03-27, two days before the change (29 March)
    const through = Date.UTC(2026, 2, 31, 12, 0);
    const dues: string[] = [];
    for (let at = nextDue(daily0230, from); at !== undefined && at <= through; at = nextDue(daily0230, at)) dues.push(local(at));
    expect(dues).toEqual(['2026-03-28 02:30', '2026-03-29 03:30', '2026-03-30 02:30', '2026-03-31 02:30']);
  });

  it('a 02:30 daily run fires once on the fall-back day (02:30 happens twice)', () => {
    const from = Date.UTC(2026, 9, 23, 12, 0);
    const through = Date.UTC(2026, 9, 27, 12, 0);
    const dues: number[] = [];
    for (let at = nextDue(daily0230, from); at !== undefined && at <= through; at = nextDue(daily0230, at)) dues.push(at);
    expect(dues.map((at) => local(at))).toEqual(['2026-10-24 02:30', '2026-10-25 02:30', '2026-10-26 02:30', '2026-10-27 02:30']);
    // The first 02:30 (summer time, 00:30 UTC), not the second (01:30 UTC).
    expect(new Date(dues[1]!).toISOString()).toBe('2026-10-25T00:30:00.000Z');
  });

  it('zonedTime gives the first of a repeated time and the hour after a skipped one, as the repeating schedules do', () => {
    expect(new Date(zonedTime({ year: 2026, month: 10, day: 25 }, 2, 30, BERLIN)).toISOString()).toBe('2026-10-25T00:30:00.000Z');
    expect(local(zonedTime({ year: 2026, month: 3, day: 29 }, 2, 30, BERLIN))).toBe('2026-03-29 03:30');
    expect(local(zonedTime({ year: 2026, month: 3, day: 8 }, 2, 30, NEW_YORK), NEW_YORK)).toBe('2026-03-08 03:30');
  });

  it('counts missed due times without listing them', () => {
    const everyMinute: When = { kind: 'cron', cron: '* * * * *', zone: BERLIN };
    const from = Date.UTC(2026, 0, 1, 0, 0);
    const week = dueBetween(everyMinute, from, from + 7 * 86_400_000);
    expect(week).toEqual({ latest: from + 7 * 86_400_000, count: 100, more: true });
    expect(dueBetween(everyMinute, from, from + 5 * 60_000)).toEqual({ latest: from + 5 * 60_000, count: 5, more: false });
    expect(dueBetween(everyMinute, from, from + 30_000)).toEqual({ latest: undefined, count: 0, more: false });
  });
});

describe('describeWhen', () => {
  it.each([
    ['0 8 * * *', 'every day at 08:00'],
    ['45 7 * * 1-5', 'every weekday at 07:45'],
    ['30 9 * * 1,4', 'every Monday and Thursday at 09:30'],
    ['*/15 * * * *', 'every 15 minutes'],
    ['0 * * * *', 'every hour'],
    ['0 */2 * * *', 'every 2 hours'],
    ['30 6 1 * *', 'cron "30 6 1 * *"'],
    ['*/5 * * * * *', 'every 5 seconds'],
  ])('%s → %s', (cron, words) => {
    expect(describeWhen({ kind: 'cron', cron, zone: BERLIN })).toBe(words);
  });

  it('says a one-time schedule in its zone', () => {
    expect(describeWhen({ kind: 'once', at: Date.UTC(2026, 11, 24, 17, 0), zone: BERLIN }, { withZone: true })).toBe('once on 2026-12-24 at 18:00 (Europe/Berlin)');
  });
});
