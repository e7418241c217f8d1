import type { SummaryTurn } from '../session/transcript-record';
import { parseSessionCommand } from '../session/continuation';

/**
 * The gateway's own chat commands, answered by Homing, not by the agent:
 * `/new [text]` and `/reset [text]` start a new conversation (and the text, if
 * any, is its first message), `/status` describes the conversation, `/help`
 * lists the commands. Telegram's `/status@SomeBot` form is accepted too.
 */
export type ChatCommand =
  | { readonly command: 'new' | 'reset'; readonly rest: string }
  | { readonly command: 'status' | 'help' }
  | { readonly command: 'schedules' }
  /** `/every <when> <prompt>`, `/once <when> <prompt>` (schedules/chat-commands.ts): `args` is everything after the command. */
  | { readonly command: 'every' | 'once'; readonly args: string };

export function parseChatCommand(text: string): ChatCommand | undefined {
  const session = parseSessionCommand(text);
  if (session) return session;
  const match = /^\s*\/(status|help|schedules)(?:@[A-Za-z0-9_]+)?\s*$/.exec(text);
  if (match) return match[1] === 'schedules' ? { command: 'schedules' } : { command: match[1] as 'status' | 'help' };
  const schedule = /^\s*\/(every|once)(?:@[A-Za-z0-9_]+)?(?:\s+([\s\S]*))?$/.exec(text);
  return schedule ? { command: schedule[1] as 'every' | 'once', args: (schedule[2] ?? '').trim() } : undefined;
}

/**
 * Whether a saved user message was a command the agent never saw (so it stays
 * out of the agent's history). `/new text` is saved as its text, so it is not.
 */
export function isCommandOnly(text: string): boolean {
  const command = parseChatCommand(text);
  return command !== undefined && !('rest' in command && command.rest !== '');
}

export const HELP_TEXT = [
  'Commands (answered by Homing, not the agent):',
  '/new — start a new conversation; /new some text starts one and answers "some text" in it',
  '/reset — the same as /new',
  '/status — this conversation: its key, messages, context used and the agent answering',
  '/every <when> <prompt> — ask the agent at a time that repeats: /every day at 08:00 Give me a short briefing',
  '/once <when> <prompt> — ask the agent once: /once tomorrow at 9:00 Remind me to call the bank',
  '/schedules — the schedules of this conversation',
  '/help — this list',
].join('\n');

export const NEW_CONVERSATION_TEXT = 'Started a new conversation. Earlier messages stay in Homing, but the agent no longer sees them.';

/** The one line a user gets when a reset policy started a new conversation since they last wrote. */
export function resetNotice(reason: 'daily' | 'idle'): string {
  return reason === 'daily'
    ? '↻ New day, new conversation: the agent no longer sees earlier messages.'
    : '↻ It has been a while, so this is a new conversation: the agent no longer sees earlier messages.';
}

export interface ConversationStatus {
  readonly sessionKey: string;
  readonly turns: number;
  readonly contextTokens: number;
  readonly budgetTokens: number;
  /** The latest summary, when older messages were condensed. */
  readonly summary?: Pick<SummaryTurn, 'covers' | 'cut' | 'trimmed'> | undefined;
  /** Messages the agent is shown now that were cut to fit the budget. */
  readonly cutNow: number;
  readonly agent: string;
}

export function statusText(status: ConversationStatus): string {
  const percent = status.budgetTokens > 0 ? Math.round((status.contextTokens / status.budgetTokens) * 100) : 0;
  return [
    `Conversation: ${status.sessionKey}`,
    `Messages: ${status.turns}${status.summary ? ` (${summaryWords(status.summary)})` : ''}`,
    `Context: about ${status.contextTokens} of ${status.budgetTokens} tokens (${percent}%)`,
    ...(status.cutNow > 0 ? [`Cut to fit: ${plural(status.cutNow, 'long message')} the agent is shown only in part`] : []),
    `Agent: ${status.agent}`,
  ].join('\n');
}

/** What a summary stands for, as the user is told it (here and in the window). */
export function summaryWords(summary: Pick<SummaryTurn, 'covers' | 'cut' | 'trimmed'>): string {
  const parts = [`the agent sees a summary instead of the ${plural(summary.covers, 'oldest message')}`];
  if (summary.cut) parts.push(`${plural(summary.cut, 'of them was', 'of them were')} cut to fit before condensing`);
  if (summary.trimmed) parts.push("the summary's end was cut to fit");
  return parts.join('; ');
}

function plural(count: number, one: string, many = `${one}s`): string {
  return count === 1 ? `1 ${one}` : `${count} ${many}`;
}
