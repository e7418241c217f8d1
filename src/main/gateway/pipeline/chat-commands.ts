import { parseSessionCommand } from '../session/continuation';

/**
 * The gateway's own chat commands, answered by Homing, not by the agent:
 * `/new [text]` and `/reset [text]` start a new conversation (and the text, if
 * any, is its first message), `/status` describes the conversation, `/help`
 * lists the commands. Telegram's `/status@SomeBot` form is accepted too.
 */
export type ChatCommand =
  | { readonly command: 'new' | 'reset'; readonly rest: string }
  | { readonly command: 'status' | 'help' };

export function parseChatCommand(text: string): ChatCommand | undefined {
  const session = parseSessionCommand(text);
  if (session) return session;
  const match = /^\s*\/(status|help)(?:@[A-Za-z0-9_]+)?\s*$/.exec(text);
  return match ? { command: match[1] as 'status' | 'help' } : undefined;
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
  readonly summarised: boolean;
  readonly agent: string;
}

export function statusText(status: ConversationStatus): string {
  const percent = status.budgetTokens > 0 ? Math.round((status.contextTokens / status.budgetTokens) * 100) : 0;
  return [
    `Conversation: ${status.sessionKey}`,
    `Messages: ${status.turns}${status.summarised ? ' (older ones condensed into a summary)' : ''}`,
    `Context: about ${status.contextTokens} of ${status.budgetTokens} tokens (${percent}%)`,
    `Agent: ${status.agent}`,
  ].join('\n');
}
