import { Cron } from 'croner';

/**
 * When a schedule runs: a cron pattern (five fields, minute to weekday) in a
 * time zone, or one moment. Due times are wall-clock times in the schedule's
 * own zone, so they follow daylight saving time: croner moves a time that a
 * spring-forward skips to the hour after (02:30 → 03:30, once) and runs a time
 * that a fall-back repeats at its first occurrence only.
 */
export type When =
  | { readonly kind: 'cron'; readonly cron: string; readonly zone: string }
  | { readonly kind: 'once'; readonly at: number; readonly zone: string };

export type WhenResult = { readonly ok: true; readonly when: When; readonly rest: string } | { readonly ok: false; readonly error: string };

/** What `/every` and `homing schedules add --every` understand, for error messages and help. */
export const EVERY_FORMS =
  '"day at 08:00", "weekday at 7:45", "monday 09:30", "mon,thu at 18:00", "hour", "15 minutes", "2 hours", or a cron pattern like "0 8 * * 1-5"';
export const ONCE_FORMS = '"14:30", "at 8pm", "tomorrow at 9:00", "2026-12-24 18:00", "in 10 minutes", "in 2 hours"';
// Seconds ("every 30 seconds", "in 20 seconds", a six-field cron) work too; they are left out of the examples.

const DAYS: Readonly<Record<string, number>> = {
  sun: 0, sunday: 0, sundays: 0,
  mon: 1, monday: 1, mondays: 1,
  tue: 2, tues: 2, tuesday: 2, tuesdays: 2,
  wed: 3, wednesday: 3, wednesdays: 3,
  thu: 4, thur: 4, thurs: 4, thursday: 4, thursdays: 4,
  fri: 5, friday: 5, fridays: 5,
  sat: 6, saturday: 6, saturdays: 6,
};
const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/**
 * `day`, `weekday`, `monday`, `mon, thu`, `tuesday and friday` at the start of
 * a "when". Whole words only, so no part of the text can be read two ways
 * (a pattern with that ambiguity takes exponential time on hostile input).
 */
const DAY_WORD = `(?:${Object.keys(DAYS)
  .sort((a, b) => b.length - a.length)
  .join('|')})\\b`;
const DAYS_LEAD = new RegExp(`^(day|daily|weekday|weekend|${DAY_WORD}(?:\\s*(?:,|&|\\band\\b)\\s*${DAY_WORD})*)(?=\\s|$)`, 'i');

/** `08:00`, `8:00`, `8am`, `8:30 pm`, `20.15`, `noon`, `midnight`: hours and minutes, or undefined. */
const TIME = /^(?:(noon|midnight)|(\d{1,2})(?:[:.h](\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?)(?=\s|$|,)/i;

function readTime(text: string): { hour: number; minute: number; length: number } | undefined {
  const match = TIME.exec(text);
  if (!match) return undefined;
  if (match[1]) return { hour: match[1].toLowerCase() === 'noon' ? 12 : 0, minute: 0, length: match[0].length };
  // A bare number is a time only with am/pm ("8pm"); "8" alone could be the start of a prompt.
  if (match[3] === undefined && match[4] === undefined) return undefined;
  let hour = Number(match[2]);
  const minute = match[3] === undefined ? 0 : Number(match[3]);
  const half = match[4]?.toLowerCase().replaceAll('.', '');
  if (half !== undefined) {
    if (hour < 1 || hour > 12) return undefined;
    hour = (hour % 12) + (half === 'pm' ? 12 : 0);
  }
  if (hour > 23 || minute > 59) return undefined;
  return { hour, minute, length: match[0].length };
}

/** The text after `consumed` characters, without the separating spaces. */
function after(text: string, consumed: number): string {
  return text.slice(consumed).trimStart();
}

/** Reads an optional `at` and a time from the start of `text`. */
function atTime(text: string): { hour: number; minute: number; rest: string } | undefined {
  const at = /^at\s+/i.exec(text);
  const from = at ? text.slice(at[0].length) : text;
  const time = readTime(from);
  if (!time) return undefined;
  return { hour: time.hour, minute: time.minute, rest: after(from, time.length) };
}

const CRON_HEAD = /^[\d*/,-]+$/;
const CRON_FIELD = /^[\dA-Za-z*/,?#LW-]+$/;

/**
 * A cron pattern at the start of `text`: quoted (`"0 8 * * 1-5"`, or six
 * fields with seconds first), or five bare fields whose first two are numeric.
 */
function readCron(text: string, zone: string): WhenResult | undefined {
  const quoted = /^(["'`])([^"'`]+)\1/.exec(text);
  let pattern: string;
  let consumed: number;
  if (quoted) {
    pattern = quoted[2]!.trim();
    consumed = quoted[0].length;
  } else {
    const fields = text.split(/\s+/).slice(0, 5);
    if (fields.length < 5 || !CRON_HEAD.test(fields[0]!) || !CRON_HEAD.test(fields[1]!) || !fields.every((field) => CRON_FIELD.test(field))) return undefined;
    pattern = fields.join(' ');
    consumed = new RegExp(`^\\s*${fields.map(escapeRegExp).join('\\s+')}`).exec(text)![0].length;
  }
  const checked = checkCron(pattern, zone);
  if (!checked.ok) return checked;
  return { ok: true, when: { kind: 'cron', cron: pattern, zone }, rest: after(text, consumed) };
}

/** Whether croner takes `pattern` (five fields: minute, hour, day of month, month, weekday; or six, seconds first) in `zone`. */
export function checkCron(pattern: string, zone: string): { ok: true } | { ok: false; error: string } {
  const fields = pattern.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) return { ok: false, error: `"${pattern}" is not a cron pattern of five fields (minute hour day month weekday)` };
  const zoneError = checkZone(zone);
  if (zoneError) return { ok: false, error: zoneError };
  try {
    new Cron(pattern, { timezone: zone, paused: true });
    return { ok: true };
  } catch (error) {
    return { ok: false, error: `"${pattern}" is not a cron pattern: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** An error line when `zone` is not an IANA time zone this runtime knows. */
export function checkZone(zone: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return undefined;
  } catch {
    return `"${zone}" is not a time zone (use a name like Europe/Berlin or America/New_York)`;
  }
}

/**
 * Reads a repeating "when" from the start of `text` (`/every <when> <prompt>`):
 * the forms in EVERY_FORMS, with or without a leading "every". What follows
 * is `rest` (the prompt).
 */
export function parseEvery(input: string, zone: string): WhenResult {
  const zoneError = checkZone(zone);
  if (zoneError) return { ok: false, error: zoneError };
  const text = input.trim().replace(/^every\s+/i, '');
  const cron = readCron(text, zone);
  if (cron) return cron;
  const interval = /^(?:(\d{1,4})\s+)?(second|sec|minute|min|hour|hr)s?(?=\s|$)/i.exec(text);
  if (interval) {
    const count = interval[1] === undefined ? 1 : Number(interval[1]);
    const word = interval[2]!.toLowerCase();
    const unit = word.startsWith('h') ? 'hour' : word.startsWith('s') ? 'second' : 'minute';
    const pattern = intervalPattern(count, unit);
    if (typeof pattern !== 'string') return pattern;
    return { ok: true, when: { kind: 'cron', cron: pattern, zone }, rest: after(text, interval[0].length) };
  }
  const days = DAYS_LEAD.exec(text);
  if (!days) return { ok: false, error: `the time is not understood; say when like ${EVERY_FORMS}` };
  const weekdays = weekdayField(days[1]!);
  if (weekdays === undefined) return { ok: false, error: `"${days[1]}" is not a day; say when like ${EVERY_FORMS}` };
  const time = atTime(after(text, days[0].length));
  if (!time) return { ok: false, error: `say at what time, like "every ${days[1]} at 08:00"` };
  return { ok: true, when: { kind: 'cron', cron: `${time.minute} ${time.hour} * * ${weekdays}`, zone }, rest: time.rest };
}

function intervalPattern(count: number, unit: 'second' | 'minute' | 'hour'): string | { ok: false; error: string } {
  if (unit === 'second') {
    if (count < 1 || count > 59 || 60 % count !== 0) return { ok: false, error: `every ${count} seconds does not divide the minute; use 1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30 seconds` };
    return `*/${count} * * * * *`;
  }
  if (unit === 'minute') {
    if (count < 1 || count > 59 || 60 % count !== 0) return { ok: false, error: `every ${count} minutes does not divide the hour; use 1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30 minutes, or a cron pattern` };
    return count === 1 ? '* * * * *' : `*/${count} * * * *`;
  }
  if (count < 1 || count > 23 || 24 % count !== 0) return { ok: false, error: `every ${count} hours does not divide the day; use 1, 2, 3, 4, 6, 8, 12 hours, or a cron pattern` };
  return count === 1 ? '0 * * * *' : `0 */${count} * * *`;
}

/** `day` → `*`, `weekday` → `1-5`, `mon, thu` → `1,4`; undefined for a word that is no day. */
function weekdayField(words: string): string | undefined {
  const lower = words.toLowerCase();
  if (lower === 'day' || lower === 'daily') return '*';
  if (lower === 'weekday') return '1-5';
  if (lower === 'weekend') return '0,6';
  const days: number[] = [];
  for (const word of lower.split(/\s*(?:,|and|&)\s*/)) {
    const day = DAYS[word];
    if (day === undefined) return undefined;
    if (!days.includes(day)) days.push(day);
  }
  return days.sort((a, b) => a - b).join(',');
}

/**
 * Reads a one-time "when" from the start of `text` (`/once <when> <text>`):
 * the forms in ONCE_FORMS. A time of day alone is its next occurrence (today,
 * else tomorrow) in `zone`.
 */
export function parseOnce(input: string, zone: string, now: number): WhenResult {
  const zoneError = checkZone(zone);
  if (zoneError) return { ok: false, error: zoneError };
  const text = input.trim().replace(/^once\s+/i, '');
  const relative = /^in\s+(\d{1,5})\s*(second|sec|minute|min|hour|hr|day)s?(?=\s|$)/i.exec(text);
  if (relative) {
    const unit = relative[2]!.toLowerCase();
    const ms = Number(relative[1]) * (unit.startsWith('d') ? 86_400_000 : unit.startsWith('h') ? 3_600_000 : unit.startsWith('s') ? 1_000 : 60_000);
    if (ms <= 0) return { ok: false, error: 'say a time in the future' };
    return { ok: true, when: { kind: 'once', at: now + ms, zone }, rest: after(text, relative[0].length) };
  }
  const dated = /^(?:on\s+)?(\d{4})-(\d{2})-(\d{2})(?:[T\s]+)/i.exec(text) ?? /^(?:on\s+)?(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const tomorrow = /^tomorrow\s+/i.exec(text);
  const today = /^today\s+/i.exec(text);
  const dateLead = dated ?? tomorrow ?? today;
  const time = atTime(dateLead ? text.slice(dateLead[0].length) : text);
  if (!time) return { ok: false, error: `the time is not understood; say when like ${ONCE_FORMS}` };
  const local = localParts(now, zone);
  let day: { year: number; month: number; day: number };
  if (dated) {
    day = { year: Number(dated[1]), month: Number(dated[2]), day: Number(dated[3]) };
    if (day.month < 1 || day.month > 12 || day.day < 1 || day.day > 31) return { ok: false, error: `${dated[1]}-${dated[2]}-${dated[3]} is not a date` };
  } else {
    day = { year: local.year, month: local.month, day: local.day };
    if (tomorrow) day = addDays(day, 1);
  }
  let at = zonedTime(day, time.hour, time.minute, zone);
  // "14:30" alone: today's, or tomorrow's once today's has passed.
  if (!dateLead && at <= now) at = zonedTime(addDays(day, 1), time.hour, time.minute, zone);
  if (at <= now) return { ok: false, error: `${describeWhen({ kind: 'once', at, zone })} has passed; say a time in the future` };
  return { ok: true, when: { kind: 'once', at, zone }, rest: time.rest };
}

/** The first due time strictly after `after`, or undefined when there is none (a one-time schedule that ran). */
export function nextDue(when: When, after: number): number | undefined {
  if (when.kind === 'once') return when.at > after ? when.at : undefined;
  const next = cronOf(when).nextRun(new Date(after));
  return next ? next.getTime() : undefined;
}

/**
 * The due times in (`from`, `through`]: the latest of them, and how many
 * there were — counted up to `countLimit` (`more` when there were more: a
 * minutely schedule after a week asleep is not walked minute by minute).
 */
export function dueBetween(when: When, from: number, through: number, countLimit = 100): { readonly latest: number | undefined; readonly count: number; readonly more: boolean } {
  const latest = latestDue(when, through);
  if (latest === undefined || latest <= from) return { latest: undefined, count: 0, more: false };
  let count = 0;
  let cursor = from;
  while (count < countLimit) {
    const next = nextDue(when, cursor);
    if (next === undefined || next > through) return { latest, count, more: false };
    cursor = next;
    count++;
  }
  const beyond = nextDue(when, cursor);
  return { latest, count, more: beyond !== undefined && beyond <= through };
}

/** The latest due time at or before `at`. */
export function latestDue(when: When, at: number): number | undefined {
  if (when.kind === 'once') return when.at <= at ? when.at : undefined;
  // Croner counts in whole seconds and looks strictly before its reference: the second after `at`.
  const [previous] = cronOf(when).previousRuns(1, new Date(Math.floor(at / 1000) * 1000 + 1000));
  return previous ? previous.getTime() : undefined;
}

const crons = new Map<string, Cron>();

/** Croner's parsed pattern, kept per pattern and zone (parsing costs more than a due time). */
function cronOf(when: Extract<When, { kind: 'cron' }>): Cron {
  const key = `${when.zone} ${when.cron}`;
  let cron = crons.get(key);
  if (!cron) {
    cron = new Cron(when.cron, { timezone: when.zone, paused: true });
    if (crons.size > 1000) crons.clear();
    crons.set(key, cron);
  }
  return cron;
}

/** "every day at 08:00", "every Monday at 09:30", "once on 2026-12-24 at 18:00 (Europe/Berlin)": what the window and chat say. */
export function describeWhen(when: When, options: { readonly withZone?: boolean } = {}): string {
  const zone = options.withZone ? ` (${when.zone})` : '';
  if (when.kind === 'once') {
    const parts = localParts(when.at, when.zone);
    return `once on ${parts.year}-${pad(parts.month)}-${pad(parts.day)} at ${pad(parts.hour)}:${pad(parts.minute)}${zone}`;
  }
  const fields = when.cron.split(/\s+/);
  if (fields.length === 6) {
    const everySeconds = /^\*\/(\d+)$/.exec(fields[0]!);
    if (everySeconds && fields.slice(1).every((field) => field === '*')) return `every ${everySeconds[1]} seconds${zone}`;
    return `cron "${when.cron}"${zone}`;
  }
  const [minute, hour, dayOfMonth, month, weekday] = fields as [string, string, string, string, string];
  const plainTime = /^\d{1,2}$/.test(minute) && /^\d{1,2}$/.test(hour);
  const at = plainTime ? `${pad(Number(hour))}:${pad(Number(minute))}` : undefined;
  if (dayOfMonth === '*' && month === '*') {
    if (at && weekday === '*') return `every day at ${at}${zone}`;
    if (at && weekday === '1-5') return `every weekday at ${at}${zone}`;
    if (at && weekday === '0,6') return `every weekend day at ${at}${zone}`;
    if (at && /^[0-6](,[0-6])*$/.test(weekday)) return `every ${weekday.split(',').map((day) => DAY_NAMES[Number(day)]).join(' and ')} at ${at}${zone}`;
    if (weekday === '*' && hour === '*' && minute === '*') return `every minute${zone}`;
    const everyMinutes = /^\*\/(\d+)$/.exec(minute);
    if (everyMinutes && hour === '*' && weekday === '*') return `every ${everyMinutes[1]} minutes${zone}`;
    if (minute === '0' && hour === '*' && weekday === '*') return `every hour${zone}`;
    const everyHours = /^\*\/(\d+)$/.exec(hour);
    if (everyHours && minute === '0' && weekday === '*') return `every ${everyHours[1]} hours${zone}`;
  }
  return `cron "${when.cron}"${zone}`;
}

/** A due time as its schedule's zone reads it: `08:00` on its day, `Mon 3 Dec 08:00` otherwise. */
export function describeDue(at: number, zone: string, now: number): string {
  const due = localParts(at, zone);
  const today = localParts(now, zone);
  const time = `${pad(due.hour)}:${pad(due.minute)}`;
  if (due.year === today.year && due.month === today.month && due.day === today.day) return time;
  return `${due.year}-${pad(due.month)}-${pad(due.day)} ${time}`;
}

interface LocalParts {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
}

const partFormats = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock date and time at `at` in `zone`. */
export function localParts(at: number, zone: string): LocalParts {
  let format = partFormats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric' });
    partFormats.set(zone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(new Date(at)).map((part) => [part.type, part.value]));
  return { year: Number(parts.year), month: Number(parts.month), day: Number(parts.day), hour: Number(parts.hour) % 24, minute: Number(parts.minute) };
}

/**
 * The moment a wall-clock time of `day` happens in `zone`: the first one when
 * a fall-back repeats it, the hour after when a spring-forward skips it (as
 * croner does for repeating schedules).
 */
export function zonedTime(day: { year: number; month: number; day: number }, hour: number, minute: number, zone: string): number {
  const wanted = Date.UTC(day.year, day.month - 1, day.day, hour, minute);
  // Offsets around the time: the zone's offset is at most a day away from UTC.
  const candidates = [-1, 0, 1]
    .map((shift) => wanted - offsetAt(wanted + shift * 43_200_000, zone))
    .filter((at, index, all) => all.indexOf(at) === index)
    .sort((a, b) => a - b);
  const exact = candidates.find((at) => {
    const parts = localParts(at, zone);
    return parts.year === day.year && parts.month === day.month && parts.day === day.day && parts.hour === hour && parts.minute === minute;
  });
  if (exact !== undefined) return exact;
  // Skipped by a spring-forward: the same wall-clock reading after the jump.
  return wanted - offsetAt(wanted - 43_200_000, zone);
}

/** The zone's offset from UTC at `at`, in milliseconds (positive east of Greenwich). */
function offsetAt(at: number, zone: string): number {
  const parts = localParts(at, zone);
  const asUtc = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute);
  return asUtc - Math.floor(at / 60_000) * 60_000;
}

function addDays(day: { year: number; month: number; day: number }, days: number): { year: number; month: number; day: number } {
  const date = new Date(Date.UTC(day.year, day.month - 1, day.day + days));
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
