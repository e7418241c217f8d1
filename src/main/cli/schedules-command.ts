import { existsSync } from 'node:fs';
import type { ScheduleRow } from '../../shared/api';
import { resolveDataDir } from '../gateway/data-dir';
import { ScheduleStore } from '../gateway/schedules/schedule-store';
import { scheduleRow } from '../gateway/schedules/schedules';
import { SessionReader } from '../gateway/session/session-reader';
import { dataDirToUse, formatTime, parseCommandArgs, UsageError, type CliContext, type Command } from './command';
import { throughGatewayOrHere, withDatabase } from './ledger-access';

const USAGE = `Usage: homing schedules list [--json] [--data-dir DIR]
       homing schedules add --every WHEN | --once WHEN (--prompt TEXT | --text TEXT) [options]
       homing schedules remove <id> [--data-dir DIR]
       homing schedules run <id> [--data-dir DIR]

  list            every schedule: when, where, next run and the last run's outcome
  add             make a schedule (needs the gateway running: it knows the conversations)
    --every WHEN    repeating: "day at 08:00", "weekday at 7:45", "monday 09:30", "15 minutes",
                    or a cron pattern "0 8 * * 1-5"
    --once WHEN     one time: "14:30", "tomorrow at 9:00", "2026-12-24 18:00", "in 10 minutes"
    --prompt TEXT   ask the agent this; its answer is delivered
    --text TEXT     deliver this text as it is
    --name NAME     what the list calls it (default: the start of the prompt)
    --to KEY        the conversation's session key or id (homing sessions list); default: the window's chat
    --zone ZONE     an IANA time zone (default: the gateway's)
    --grace MIN     a run missed while asleep or closed runs late within MIN minutes (default 120);
                    later it is skipped and the conversation is told
  remove          delete a schedule (a run already started still gets its answer)
  run             run a schedule once, now (needs the gateway running)
  --json          machine-readable output
  --data-dir DIR  data directory (default: $HOMING_DATA_DIR, else the tray app's)`;

/**
 * Schedules from the command line. Listing and removing work with or
 * without a gateway; making one and running one go through the running
 * gateway, which knows the conversations and does the running.
 */
export const schedulesCommand: Command = {
  name: 'schedules',
  summary: 'list, add, remove or run the schedules (the assistant writes first)',
  usage: USAGE,
  async run(args, context) {
    const { values, positionals } = parseCommandArgs(
      'schedules',
      args,
      {
        json: { type: 'boolean' },
        'data-dir': { type: 'string' },
        every: { type: 'string' },
        once: { type: 'string' },
        prompt: { type: 'string' },
        text: { type: 'string' },
        name: { type: 'string' },
        to: { type: 'string' },
        zone: { type: 'string' },
        grace: { type: 'string' },
      },
      { min: 1, max: 2 },
    );
    const [action, idText] = positionals;
    const dataDir = resolveDataDir(values['data-dir'], context.env);
    const addOnly = (['every', 'once', 'prompt', 'text', 'name', 'to', 'zone', 'grace'] as const).filter((flag) => values[flag] !== undefined);
    if (action !== 'add' && addOnly.length > 0) throw new UsageError(`schedules ${action}: --${addOnly[0]} applies to add only`);
    switch (action) {
      case 'list': {
        if (idText !== undefined) throw new UsageError(`schedules list: unexpected argument "${idText}"`);
        dataDirToUse('schedules', values['data-dir'], context.env);
        const outcome = await throughGatewayOrHere(dataDir, { method: 'listSchedules', params: undefined, read: (value) => (value as { schedules: ScheduleRow[] }).schedules }, () =>
          existsSync(dataDir) ? (withDatabase(dataDir, (db) => listHere(db, dataDir)) ?? []) : [],
        );
        if (values.json) context.stdout(JSON.stringify(outcome.value, null, 2));
        else printList(outcome.value, context);
        return 0;
      }
      case 'add': {
        if (idText !== undefined) throw new UsageError(`schedules add: unexpected argument "${idText}"`);
        if ((values.every === undefined) === (values.once === undefined)) throw new UsageError('schedules add: say when with --every WHEN or --once WHEN (one of them)');
        if ((values.prompt === undefined) === (values.text === undefined)) throw new UsageError('schedules add: say what with --prompt TEXT or --text TEXT (one of them)');
        const grace = values.grace === undefined ? undefined : Number(values.grace);
        if (grace !== undefined && (!Number.isInteger(grace) || grace < 0 || grace > 10_080)) throw new UsageError('schedules add: --grace is whole minutes, 0 to 10080');
        dataDirToUse('schedules', values['data-dir'], context.env);
        const params = {
          repeat: values.every !== undefined ? ('every' as const) : ('once' as const),
          when: (values.every ?? values.once)!,
          action: values.prompt !== undefined ? ('prompt' as const) : ('text' as const),
          body: (values.prompt ?? values.text)!,
          via: 'cli' as const,
          ...(values.name !== undefined ? { name: values.name } : {}),
          ...(values.to !== undefined ? { sessionKey: values.to } : {}),
          ...(values.zone !== undefined ? { zone: values.zone } : {}),
          ...(grace !== undefined ? { graceMinutes: grace } : {}),
        };
        const row = await throughGateway(dataDir, 'addSchedule', params, 'made');
        context.stdout(`Made schedule ${row.id} “${row.name}”: ${row.when} (${row.zone}), ${row.nextRunAt === null ? 'no run left' : `next run ${formatTime(row.nextRunAt)}`}.`);
        return 0;
      }
      case 'remove':
      case 'run': {
        const id = parseId(action, idText);
        if (values.json !== undefined) throw new UsageError(`schedules ${action}: --json applies to list only`);
        dataDirToUse('schedules', values['data-dir'], context.env);
        if (action === 'run') {
          const row = await throughGateway(dataDir, 'runScheduleNow', { id }, 'run');
          context.stdout(`Running schedule ${row.id} “${row.name}” now; its answer arrives in its conversation.`);
          return 0;
        }
        const outcome = await throughGatewayOrHere(dataDir, { method: 'removeSchedule', params: { id }, read: (value) => (value as { removed: boolean }).removed }, () =>
          existsSync(dataDir) ? (withDatabase(dataDir, (db) => new ScheduleStore(db).remove(id)) ?? false) : false,
        );
        if (!outcome.value) throw new Error(`there is no schedule ${id} (see homing schedules list)`);
        context.stdout(`Removed schedule ${id}.`);
        return 0;
      }
      default:
        throw new UsageError(`schedules: unknown action "${action}"; use list, add, remove or run`);
    }
  },
};

function parseId(action: string, text: string | undefined): number {
  const id = Number(text);
  if (text === undefined || !/^\d{1,9}$/.test(text) || id < 1) throw new UsageError(`schedules ${action}: which schedule? give its number (see homing schedules list)`);
  return id;
}

/** Made or run by the running gateway only: it knows the conversations and does the running. */
async function throughGateway(dataDir: string, method: 'addSchedule' | 'runScheduleNow', params: unknown, verb: string): Promise<ScheduleRow> {
  const outcome = await throughGatewayOrHere(dataDir, { method, params, read: (value) => value as ScheduleRow }, () => undefined);
  if (outcome.via === 'here' || outcome.value === undefined) {
    throw new Error(`no gateway runs on ${dataDir}: a schedule is ${verb} by the running gateway — start it (homing gateway, or the tray app) and try again`);
  }
  return outcome.value;
}

function listHere(db: Parameters<Parameters<typeof withDatabase>[1]>[0], dataDir: string): ScheduleRow[] {
  const store = new ScheduleStore(db);
  const sessions = new SessionReader(db, dataDir);
  const last = store.lastRuns();
  return store.list().map((schedule) => scheduleRow(schedule, last.get(schedule.id), sessions));
}

function printList(rows: readonly ScheduleRow[], context: CliContext): void {
  if (rows.length === 0) {
    context.stdout('No schedules. Make one in the window (Schedules), with /every in a chat, or: homing schedules add --every "day at 08:00" --prompt "Give me a short briefing"');
    return;
  }
  for (const row of rows) {
    const where = row.where.platform === 'local' ? 'the window’s chat' : `${row.where.platform}${row.where.title ? ` · ${row.where.title}` : ''}`;
    const next = row.paused ? 'paused' : row.nextRunAt === null ? 'done' : `next ${formatTime(row.nextRunAt)}`;
    context.stdout(`${row.id}  “${row.name}”  ${row.when} (${row.zone})  → ${where}  ${next}`);
    context.stdout(`    ${row.action === 'prompt' ? 'asks the agent' : 'sends'}: ${oneLine(row.body)}`);
    if (row.lastRun) context.stdout(`    last run ${formatTime(row.lastRun.dueAt)}: ${lastRunWords(row.lastRun)}`);
  }
}

function lastRunWords(run: NonNullable<ScheduleRow['lastRun']>): string {
  switch (run.state) {
    case 'running':
      return 'running';
    case 'answered':
      return run.reason === 'late' ? 'answered (late, within the grace window)' : 'answered';
    case 'failed':
      return `failed: ${run.detail ?? 'see the conversation'}`;
    default:
      return `skipped${run.missed > 1 ? ` (${run.missed} runs)` : ''}: ${run.detail ?? 'missed'}`;
  }
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
}
