import type { ConversationContext, TurnMessage } from '../agents/agent';
import { DEFAULT_SYSTEM_PROMPT, instructionsPart, renderSystemPrompt, speakerText, summaryPreface } from '../agents/system-prompt';
import { estimateMessageTokens, type ModelFamily } from '../agents/token-estimate';

/**
 * The agent's context window in tokens: what one request costs (estimated as
 * the OpenAI-compatible agent builds it: system message, summary, turns), and,
 * when it is over the budget, which older turns to condense so the next
 * request fits. Kept turns are the newest ones, up to half the budget; the
 * rest of the budget is room for the system message, the summary and the reply.
 */

export interface WindowRequest {
  readonly history: readonly TurnMessage[];
  readonly current: TurnMessage;
  readonly context: ConversationContext;
  /** The system message's template (the agent's or a routing rule's); the default when absent. */
  readonly systemPrompt?: string | undefined;
  readonly family: ModelFamily;
}

/** The estimated tokens of the request's messages. */
export function requestTokens(request: WindowRequest): number {
  const { context, family } = request;
  const template = context.route?.systemPrompt ?? request.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
  const system = [renderSystemPrompt(template, context), ...(context.instructions ? [instructionsPart(context.instructions)] : [])].join('\n\n');
  let tokens = estimateMessageTokens(system, family);
  if (context.summary) tokens += estimateMessageTokens(summaryPreface(context.summary), family);
  for (const message of [...request.history, request.current]) tokens += estimateMessageTokens(speakerText(message, context), family);
  return tokens;
}

export type WindowPlan =
  | { readonly kind: 'fits'; readonly tokens: number }
  /** Condense `history[0, condense)`; keep the rest word for word. */
  | { readonly kind: 'condense'; readonly condense: number; readonly tokens: number }
  /** Over the budget with nothing older to condense (the new message alone is that long): sent as it is. */
  | { readonly kind: 'over'; readonly tokens: number };

export function planWindow(request: WindowRequest, limits: { readonly budgetTokens: number; readonly maxTurns: number }): WindowPlan {
  const tokens = requestTokens(request);
  const { history } = request;
  if (tokens <= limits.budgetTokens && history.length <= limits.maxTurns) return { kind: 'fits', tokens };
  // Newest first, kept while they fit in half the budget (and half the turns).
  const room = Math.floor(limits.budgetTokens / 2) - estimateMessageTokens(speakerText(request.current, request.context), request.family);
  const maxKept = Math.floor(limits.maxTurns / 2);
  let kept = 0;
  let used = 0;
  while (kept < history.length && kept < maxKept) {
    const cost = estimateMessageTokens(speakerText(history[history.length - 1 - kept]!, request.context), request.family);
    if (used + cost > room) break;
    used += cost;
    kept++;
  }
  const condense = history.length - kept;
  return condense > 0 ? { kind: 'condense', condense, tokens } : { kind: 'over', tokens };
}

/**
 * The older turns to send with the request to condense them: the newest of
 * them that fit the budget less room for the answer. Turns beyond that are
 * dropped (logged by the caller): they only exist when the budget was lowered
 * far below a conversation's size.
 */
export function condensable(request: WindowRequest, older: readonly TurnMessage[], ask: TurnMessage, budgetTokens: number): TurnMessage[] {
  const room = Math.floor((budgetTokens * 3) / 4);
  const base = requestTokens({ ...request, history: [], current: ask });
  let used = base;
  let from = older.length;
  while (from > 0) {
    const cost = estimateMessageTokens(speakerText(older[from - 1]!, request.context), request.family);
    if (used + cost > room) break;
    used += cost;
    from--;
  }
  return older.slice(from);
}
