import type { ConversationContext, TurnMessage } from '../agents/agent';
import {
  DEFAULT_SYSTEM_PROMPT,
  instructionsPart,
  renderSystemPrompt,
  SHORTEN_SUMMARY_REQUEST,
  speakerText,
  SUMMARISE_REQUEST,
  summaryPreface,
} from '../agents/system-prompt';
import { estimateMessageTokens, type ModelFamily } from '../agents/token-estimate';

/**
 * The one accounting of the agent's context window, in estimated tokens, as
 * the OpenAI-compatible agent builds a request (system message, summary,
 * turns). The budget is shared out so that every request fits it, whatever
 * the conversation holds:
 *   - the system message gets 9/20 (the owner's instructions are cut to fit);
 *   - a summary at most 1/5 (a longer one is condensed again, then cut);
 *   - one message at most what is left once a summary and the summarise
 *     request are counted: a longer message is cut for the agent, with a line
 *     saying so, the same way every turn (the cut depends on the budget and
 *     the model family only);
 * so a summarise request always has room for at least one message, and a
 * reply request for the summary and the message it answers.
 */

export interface Shares {
  readonly budget: number;
  readonly system: number;
  readonly summary: number;
  readonly message: number;
}

/**
 * The budget's shares. A system message over its share (a long template or
 * display name) takes the excess from the message share, so requests still
 * fit; only then does the cut of a long message depend on the turn.
 */
export function sharesOf(budgetTokens: number, family: ModelFamily, systemTokens = 0): Shares {
  const system = Math.max(Math.floor((budgetTokens * 9) / 20), systemTokens);
  const summary = Math.floor(budgetTokens / 5);
  const ask = Math.max(askTokens(SUMMARISE_REQUEST, family), askTokens(SHORTEN_SUMMARY_REQUEST, family));
  return { budget: budgetTokens, system, summary, message: budgetTokens - system - summary - ask };
}

function askTokens(text: string, family: ModelFamily): number {
  return estimateMessageTokens(text, family);
}

export interface Accounting {
  readonly context: ConversationContext;
  readonly systemPrompt?: string | undefined;
  readonly family: ModelFamily;
}

/** The system message as the agent gets it. */
export function systemMessage(accounting: Accounting): string {
  const { context } = accounting;
  const template = context.route?.systemPrompt ?? accounting.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
  return [renderSystemPrompt(template, context), ...(context.instructions ? [instructionsPart(context.instructions)] : [])].join('\n\n');
}

export function systemTokens(accounting: Accounting): number {
  return estimateMessageTokens(systemMessage(accounting), accounting.family);
}

/** A summary's cost in a request (its preface included); none without one. */
export function summaryTokens(summary: string | undefined, family: ModelFamily): number {
  return summary === undefined ? 0 : estimateMessageTokens(summaryPreface(summary), family);
}

export function messageTokens(message: TurnMessage, accounting: Accounting): number {
  return estimateMessageTokens(speakerText(message, accounting.context), accounting.family);
}

/** The estimated tokens of a request: system message, summary (the context's), history and message. */
export function requestTokens(accounting: Accounting, history: readonly TurnMessage[], current: TurnMessage): number {
  let tokens = systemTokens(accounting) + summaryTokens(accounting.context.summary, accounting.family);
  for (const message of [...history, current]) tokens += messageTokens(message, accounting);
  return tokens;
}

/**
 * The context with the owner's instructions cut so the system message fits
 * its share; unchanged when it already does. (A template longer than the
 * share on its own cannot be helped: the shares make room for it.)
 */
export function withinSystemShare(accounting: Accounting, shares: Shares): ConversationContext {
  const { context } = accounting;
  if (!context.instructions || systemTokens(accounting) <= shares.system) return context;
  const cost = (instructions: string) => systemTokens({ ...accounting, context: { ...context, instructions } });
  const kept = cutToFit(context.instructions, shares.system, cost, INSTRUCTIONS_CUT);
  return { ...context, instructions: kept };
}

const INSTRUCTIONS_CUT = (shown: number, total: number) => `\n[Homing: these instructions were cut to fit the context budget: ${shown} of ${total} characters shown]`;
const MESSAGE_CUT = (shown: number, total: number) => `\n[Homing: this message was cut to fit the context budget: ${shown} of ${total} characters shown]`;

/**
 * The message as the agent is shown it: whole when it fits one message's
 * share, else its beginning and a line saying it was cut. Depends only on the
 * message, the share and the family, so a message is cut the same way every turn.
 */
export function clipMessage(message: TurnMessage, accounting: Accounting, share: number): TurnMessage {
  if (messageTokens(message, accounting) <= share) return message;
  const cost = (text: string) => messageTokens({ ...message, text }, accounting);
  return { ...message, text: cutToFit(message.text, share, cost, MESSAGE_CUT) };
}

/**
 * The longest beginning of `text` that, with the cut line, costs at most
 * `tokens` as `cost` counts it (the whole message or system message: the
 * estimate is not additive, and a group message's lines are each quoted).
 */
function cutToFit(text: string, tokens: number, cost: (text: string) => number, line: (shown: number, total: number) => string): string {
  const chars = [...text];
  const cut = (n: number) => chars.slice(0, n).join('') + line(n, chars.length);
  let low = 0;
  let high = chars.length - 1;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (cost(cut(mid)) <= tokens) low = mid;
    else high = mid - 1;
  }
  return cut(low);
}
