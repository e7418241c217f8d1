import type { ChatCommand } from '../pipeline/chat-commands';
import type { ScheduleCommandPlace } from '../pipeline/pipeline';
import { LOCAL_PLATFORM } from '../platforms/local/local-adapter';
import { ScheduleInputError, type Schedules } from './schedules';
import { describeDue, EVERY_FORMS, ONCE_FORMS, parseEvery, parseOnce } from './when';

type ScheduleCommand = Extract<ChatCommand, { command: 'every' | 'once' | 'schedules' }>;

/**
 * `/every <when> <prompt>`, `/once <when> <prompt>` and `/schedules`, answered
 * by Homing. Only the owner makes schedules from a chat: in the window's own
 * chat, and in a direct chat with someone allowed to talk to the agent (the
 * pairing rules already decided that before a message gets here). A group or
 * channel cannot: anyone in it could.
 */
export function answerScheduleCommand(schedules: Schedules, command: ScheduleCommand, where: ScheduleCommandPlace, deps: { readonly now: number; readonly zone: string }): string {
  if (command.command === 'schedules') return listHere(schedules, where, deps.now);
  if (where.platform !== LOCAL_PLATFORM && where.chatType !== 'direct') {
    return 'Schedules are made in a direct chat with the assistant, or in Homing’s window (Schedules): in a group anyone could make one.';
  }
  if (command.args === '') return usage(command.command);
  const parsed = command.command === 'every' ? parseEvery(command.args, deps.zone) : parseOnce(command.args, deps.zone, deps.now);
  if (!parsed.ok) return `⚠ ${capitalise(parsed.error)}.\n${usage(command.command)}`;
  if (parsed.rest === '') return `⚠ What should the assistant do then? Put it after the time.\n${usage(command.command)}`;
  try {
    const row = schedules.add(
      { repeat: command.command, when: command.args.slice(0, command.args.length - parsed.rest.length).trim(), zone: deps.zone, action: 'prompt', body: parsed.rest, sessionKey: where.sessionKey },
      'chat',
    );
    const next = row.nextRunAt === null ? 'it will not run (its time has passed)' : `next run ${describeDue(row.nextRunAt, row.zone, deps.now)}`;
    return `⏰ Scheduled “${row.name}”: ${row.when} (${row.zone}); ${next}. /schedules lists this conversation’s schedules.`;
  } catch (error) {
    if (error instanceof ScheduleInputError) return `⚠ ${capitalise(error.message)}.`;
    throw error;
  }
}

function listHere(schedules: Schedules, where: ScheduleCommandPlace, now: number): string {
  // The window's own chat is the owner's: it lists every schedule; a conversation lists its own.
  const rows = schedules.list().filter((row) => where.platform === LOCAL_PLATFORM || row.where.sessionKey === where.sessionKey);
  if (rows.length === 0) return 'No schedules here. Make one with /every <when> <prompt> or /once <when> <prompt>.';
  const lines = rows.map((row) => {
    const next = row.paused ? 'paused' : row.nextRunAt === null ? 'done' : `next ${describeDue(row.nextRunAt, row.zone, now)}`;
    return `#${row.id} “${row.name}” — ${row.when} (${next})`;
  });
  return ['Schedules:', ...lines, 'Pause, edit or remove them in Homing’s window (Schedules), or with `homing schedules remove <id>`.'].join('\n');
}

function usage(command: 'every' | 'once'): string {
  return command === 'every'
    ? `Use: /every <when> <prompt>, with <when> like ${EVERY_FORMS}. Example: /every day at 08:00 Give me a short briefing`
    : `Use: /once <when> <prompt>, with <when> like ${ONCE_FORMS}. Example: /once tomorrow at 9:00 Remind me to call the bank`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
