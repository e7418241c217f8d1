import type { ApiParams, ScheduleAction, ScheduleRepeat, ScheduleRow, ScheduleRunSummary, SessionSummary } from '../../../../shared/api';
import { platformLabel } from '../../plain-words';

/**
 * The Schedules view's words and its form's values, as pure functions (tested
 * in schedule-words.test.ts): what a row says about when, where, what, its
 * next run and its last one; and what the form sends to the gateway.
 */

/** The most a grace window can be (the API's limit): a week. */
export const MAX_GRACE_MINUTES = 7 * 24 * 60;
export const DEFAULT_GRACE_MINUTES = 120;

/** "every day at 08:00", and its zone when it is not the list's (the gateway's). */
export function whenWords(row: Pick<ScheduleRow, 'when' | 'zone'>, listZone: string): string {
  if (row.zone === listZone || row.when.includes(`(${row.zone})`)) return row.when;
  return `${row.when} (${row.zone})`;
}

/** Where a schedule writes: "this window's chat", or "Alice on Telegram". */
export function whereWords(where: ScheduleRow['where']): string {
  if (where.platform === 'local') return "this window's chat";
  const platform = platformLabel(where.platform);
  return where.title ? `${where.title} on ${platform}` : `a conversation on ${platform}`;
}

/** A conversation as the form's "Where" list names it. */
export function conversationWords(session: Pick<SessionSummary, 'title' | 'chat' | 'platform'>): string {
  return `${session.title ?? session.chat} on ${platformLabel(session.platform)}`;
}

/** The conversations a schedule can write in besides this window's chat: the current one of each chat, not the window's own. */
export function conversationChoices(sessions: readonly SessionSummary[]): SessionSummary[] {
  const seen = new Set<string>();
  return sessions.filter((session) => {
    if (session.platform === 'local' || !session.current || seen.has(session.sessionKey)) return false;
    seen.add(session.sessionKey);
    return true;
  });
}

/** The body on one line, cut at `max` characters with an ellipsis. */
export function shortBody(body: string, max = 120): string {
  const line = body.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}

export function actionWords(action: ScheduleAction): string {
  return action === 'prompt' ? 'Asks the agent' : 'Sends the text';
}

/** "in 8 min", "in 3 h", "in 2 days", "now"; for a past time "5 min ago". */
export function relativeTime(at: number, now: number): string {
  const seconds = Math.round((at - now) / 1000);
  const future = seconds > 0;
  const abs = Math.abs(seconds);
  if (abs < 30) return future ? 'now' : 'just now';
  const say = (amount: string) => (future ? `in ${amount}` : `${amount} ago`);
  if (abs < 90) return say('1 min');
  const minutes = Math.round(abs / 60);
  if (minutes < 60) return say(`${minutes} min`);
  const hours = Math.round(minutes / 60);
  if (hours < 36) return say(`${hours} h`);
  const days = Math.round(hours / 24);
  return say(`${days} days`);
}

const absoluteFormats = new Map<string, Intl.DateTimeFormat>();

function absoluteFormat(zone: string | undefined, withYear: boolean, locale: string | undefined): Intl.DateTimeFormat {
  const key = `${locale ?? ''}|${zone ?? ''}|${withYear}`;
  let format = absoluteFormats.get(key);
  if (!format) {
    const options: Intl.DateTimeFormatOptions = { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' };
    if (withYear) options.year = 'numeric';
    try {
      format = new Intl.DateTimeFormat(locale, { ...options, timeZone: zone });
    } catch {
      // A zone this browser does not know: its own time, rather than nothing.
      format = new Intl.DateTimeFormat(locale, options);
    }
    absoluteFormats.set(key, format);
  }
  return format;
}

/** "Sat 5 Dec, 08:00" in `zone` (the gateway's), with the year when it is not this year's. */
export function absoluteTime(at: number, zone: string | undefined, now: number, locale?: string): string {
  const withYear = new Date(at).getUTCFullYear() !== new Date(now).getUTCFullYear();
  return absoluteFormat(zone, withYear, locale).format(at);
}

/** The next run's line: "in 8 min · Sat 5 Dec, 08:00", "paused", or why there is none. */
export function nextRunWords(row: Pick<ScheduleRow, 'paused' | 'nextRunAt' | 'repeat' | 'lastRun'>, zone: string, now: number, locale?: string): string {
  if (row.paused) return 'paused';
  if (row.nextRunAt === null) return row.repeat === 'once' && row.lastRun ? 'none — it has run' : 'none';
  return `${relativeTime(row.nextRunAt, now)} · ${absoluteTime(row.nextRunAt, zone, now, locale)}`;
}

export type RunTone = 'ok' | 'bad' | 'warn' | 'busy';

function times(count: number): string {
  return count === 1 ? 'once' : `${count} times`;
}

/** A last run's outcome in words, with a tone for its colour. */
export function lastRunWords(run: ScheduleRunSummary, action: ScheduleAction): { readonly tone: RunTone; readonly text: string } {
  const missed = run.missed > 0 ? ` (it stands for ${run.missed} missed run${run.missed === 1 ? '' : 's'})` : '';
  switch (run.state) {
    case 'running':
      return { tone: 'busy', text: action === 'prompt' ? 'running… the agent is answering' : 'running…' };
    case 'answered': {
      const done = action === 'prompt' ? 'answered' : 'sent';
      const how = run.reason === 'now' ? ' (run by hand)' : run.reason === 'late' ? ' — late: this computer was asleep or Homing was closed' : '';
      return { tone: 'ok', text: `${done}${how}${missed}` };
    }
    case 'failed':
      return { tone: 'bad', text: `failed: ${run.detail ?? 'no reason was given.'}` };
    case 'skipping':
    case 'skipped': {
      const count = run.missed > 1 ? ` (${times(run.missed)})` : '';
      const told = run.state === 'skipping' ? '; telling the conversation…' : '';
      const detail = run.detail ? ` ${run.detail}` : '';
      return { tone: 'warn', text: `missed — this computer was asleep or Homing was closed${count}${told}.${detail}` };
    }
  }
}

/** The form's values, as typed (grace is text until sent). `sessionKey` '' is this window's chat. */
export interface ScheduleForm {
  readonly name: string;
  readonly repeat: ScheduleRepeat;
  readonly when: string;
  readonly action: ScheduleAction;
  readonly body: string;
  readonly sessionKey: string;
  readonly grace: string;
}

export type FormField = 'name' | 'when' | 'body' | 'grace';

export const EMPTY_FORM: ScheduleForm = { name: '', repeat: 'every', when: '', action: 'prompt', body: '', sessionKey: '', grace: String(DEFAULT_GRACE_MINUTES) };

/** The examples under the "When" field, for each kind of repeat. */
export const WHEN_EXAMPLES: Readonly<Record<ScheduleRepeat, string>> = {
  every: '“day at 08:00”, “weekday at 7:45”, “monday 09:30”, “15 minutes”, or a cron pattern like “0 8 * * 1-5”',
  once: '“14:30”, “tomorrow at 9:00”, “2026-12-24 18:00”, “in 10 minutes”',
};

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

/** The wall-clock parts of `at` in `zone`. */
function zonedParts(at: number, zone: string): { year: number; month: number; day: number; hour: number; minute: number } {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric' });
  } catch {
    format = new Intl.DateTimeFormat('en-US', { hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric' });
  }
  const parts = Object.fromEntries(format.formatToParts(at).map((part) => [part.type, part.value]));
  return { year: Number(parts.year), month: Number(parts.month), day: Number(parts.day), hour: Number(parts.hour) % 24, minute: Number(parts.minute) };
}

/**
 * What the "When" field says for a schedule being edited, in a form the
 * gateway reads back the same: "day at 08:00" (its words without "every"),
 * the cron pattern where the words are not a form it reads, "2026-12-24 18:00"
 * for a one-time schedule.
 */
export function whenInput(row: Pick<ScheduleRow, 'repeat' | 'when' | 'cron' | 'onceAt' | 'zone'>): string {
  if (row.repeat === 'once') {
    if (row.onceAt === null) return row.when.replace(/^once\s+(on\s+)?/i, '');
    const at = zonedParts(row.onceAt, row.zone);
    return `${at.year}-${pad(at.month)}-${pad(at.day)} ${pad(at.hour)}:${pad(at.minute)}`;
  }
  const words = row.when.replace(/\s+\([^()]*\)$/, '');
  const readable = /^every\s+(day|weekday|minute|hour|\d+ minutes|\d+ hours|(?:(?:sun|mon|tue|wed|thu|fri|sat)[a-z]*(?: and )?)+)(\s+at\s+\d{1,2}:\d{2})?$/i.exec(words);
  if (readable) return words.replace(/^every\s+/i, '');
  return row.cron ?? words;
}

/** A row as the form shows it for Edit. */
export function formFromRow(row: ScheduleRow): ScheduleForm {
  return {
    name: row.name,
    repeat: row.repeat,
    when: whenInput(row),
    action: row.action,
    body: row.body,
    sessionKey: row.where.platform === 'local' ? '' : row.where.sessionKey,
    grace: String(row.graceMinutes),
  };
}

export type FormCheck<T> = { readonly ok: true; readonly params: T } | { readonly ok: false; readonly field: FormField; readonly error: string };

/** The grace field as minutes, or what is wrong with it. */
function graceMinutes(text: string): number | string {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) return 'the grace period is a whole number of minutes (0 or more)';
  const minutes = Number(trimmed);
  if (minutes > MAX_GRACE_MINUTES) return `the grace period is at most ${MAX_GRACE_MINUTES} minutes (a week)`;
  return minutes;
}

/** What the form lacks before it is worth sending (the gateway checks the rest, and says what it does not understand). */
function checkForm(form: ScheduleForm): { field: FormField; error: string } | { grace: number } {
  if (form.when.trim() === '') return { field: 'when', error: `say when, like ${WHEN_EXAMPLES[form.repeat]}` };
  if (form.body.trim() === '') return { field: 'body', error: form.action === 'prompt' ? 'write the prompt for the agent' : 'write the text to send' };
  const grace = graceMinutes(form.grace);
  if (typeof grace === 'string') return { field: 'grace', error: grace };
  return { grace };
}

/** addSchedule's params from the form; no sessionKey is this window's chat. */
export function addParams(form: ScheduleForm): FormCheck<ApiParams<'addSchedule'>> {
  const checked = checkForm(form);
  if ('error' in checked) return { ok: false, ...checked };
  const name = form.name.trim();
  return {
    ok: true,
    params: {
      ...(name ? { name } : {}),
      repeat: form.repeat,
      when: form.when.trim(),
      action: form.action,
      body: form.body.trim(),
      ...(form.sessionKey ? { sessionKey: form.sessionKey } : {}),
      graceMinutes: checked.grace,
    },
  };
}

/**
 * updateSchedule's params: only what the form changed (`repeat` and `when`
 * together, and only when one of them did, so a one-time schedule whose time
 * is near is not read again). Null when nothing changed.
 */
export function updateParams(row: ScheduleRow, form: ScheduleForm): FormCheck<ApiParams<'updateSchedule'> | null> {
  const checked = checkForm(form);
  if ('error' in checked) return { ok: false, ...checked };
  const before = formFromRow(row);
  const changes: { -readonly [K in keyof ApiParams<'updateSchedule'>]: ApiParams<'updateSchedule'>[K] } = { id: row.id };
  if (form.name.trim() !== before.name.trim()) changes.name = form.name.trim();
  if (form.repeat !== before.repeat || form.when.trim() !== before.when.trim()) {
    changes.repeat = form.repeat;
    changes.when = form.when.trim();
  }
  if (form.action !== before.action) changes.action = form.action;
  if (form.body.trim() !== before.body.trim()) changes.body = form.body.trim();
  if (checked.grace !== row.graceMinutes) changes.graceMinutes = checked.grace;
  return { ok: true, params: Object.keys(changes).length > 1 ? changes : null };
}

/** The gateway's error without the method's name it may start with ("addSchedule: when: …"). */
export function gatewayWords(message: string): string {
  return message.replace(/^(addSchedule|updateSchedule|removeSchedule|runScheduleNow):\s*/, '');
}

/** Which field a gateway error is about, to mark and focus it; null when it does not say. */
export function fieldOfError(message: string): FormField | null {
  const words = gatewayWords(message);
  if (/^name\b|\bname:/i.test(words)) return 'name';
  if (/grace/i.test(words)) return 'grace';
  if (/^body\b|prompt is empty|text is empty/i.test(words)) return 'body';
  if (/^when\b|time|cron|date|\bday\b|minute|hour|passed|future|zone/i.test(words)) return 'when';
  return null;
}
