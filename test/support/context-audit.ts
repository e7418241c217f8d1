import { SUMMARISE_REQUEST } from '../../src/main/gateway/agents/system-prompt';
import { estimateMessageTokens, modelFamily } from '../../src/main/gateway/agents/token-estimate';
import type { ChatRequest } from './openai-stub';

/**
 * Checks a conversation's context budget from what an OpenAI-compatible
 * server received, black box: messages are tagged (`«u3»` in the third user
 * message, `«a3»` in the agent's reply to it), the stub answers each reply
 * request with its tag and each other request (a summarise request) from a
 * script, and this reads the requests in order. What it checks:
 *   - every request fits the budget, its system messages and summary counted;
 *   - a turn leaves the agent's view only inside a summarise request the agent
 *     answered (or, for one request, while a summarise request just failed),
 *     and a turn condensed is not shown again;
 *   - every summary in the transcript stands for exactly the turns the
 *     succeeded summarise requests carried;
 *   - a message is shown the same way in every request, whole or cut with a
 *     line saying so.
 */

/** What the stub answered to one request: `undefined` for a reply, else the summary (`''`: a failure). */
export type Answered = string | undefined;

export interface Conversation {
  readonly budget: number;
  readonly model: string;
  readonly requests: readonly ChatRequest[];
  readonly answers: readonly Answered[];
  /** The text of each user message (index 1 is `«u1»`), and of each reply. */
  readonly sent: ReadonlyMap<string, string>;
  /** The transcript's summaries' `covers`, in order. */
  readonly summaries: readonly number[];
}

const TAG = /«([ua]\d+)»/g;

export function tagOf(kind: 'u' | 'a', index: number): string {
  return `«${kind}${index}»`;
}

/** The stub's side: which message a reply request answers (undefined for a summarise request). */
export function answersMessage(request: ChatRequest): number | undefined {
  const last = request.messages.at(-1);
  if (last?.role !== 'user') return undefined;
  const match = /«u(\d+)»/.exec(last.content);
  return match ? Number(match[1]) : undefined;
}

export function requestCost(request: ChatRequest, model: string): number {
  const family = modelFamily(model);
  return request.messages.reduce((sum, message) => sum + estimateMessageTokens(message.content, family), 0);
}

function tagsIn(messages: ChatRequest['messages']): Set<string> {
  const tags = new Set<string>();
  for (const message of messages) if (message.role !== 'system') for (const match of message.content.matchAll(TAG)) tags.add(match[1]!);
  return tags;
}

export function auditContext(conversation: Conversation): string[] {
  const problems: string[] = [];
  const condensed = new Set<string>();
  const carriedCounts: number[] = [];
  let failedSinceReply = false;
  const shownAs = new Map<string, string>();
  conversation.requests.forEach((request, k) => {
    const cost = requestCost(request, conversation.model);
    if (cost > conversation.budget) problems.push(`request ${k}: about ${cost} tokens, over the budget of ${conversation.budget}`);
    for (const message of request.messages) {
      if (message.role === 'system') continue;
      for (const tag of tagsIn([message])) checkShown(tag, message.content, conversation, shownAs, problems, k);
    }
    const answering = answersMessage(request);
    if (answering === undefined) {
      const carried = tagsIn(request.messages.slice(0, -1));
      const answer = conversation.answers[k];
      // Only a failed summarise request may leave turns out (a failed shortening of a summary loses none).
      if (answer === '') failedSinceReply ||= request.messages.at(-1)?.content === SUMMARISE_REQUEST;
      else if (carried.size > 0) {
        for (const tag of carried) condensed.add(tag);
        carriedCounts.push(carried.size);
      }
      return;
    }
    const shown = tagsIn(request.messages.slice(0, -1));
    for (let j = 1; j < answering; j++) {
      for (const tag of [`u${j}`, `a${j}`]) {
        if (!shown.has(tag) && !condensed.has(tag) && !failedSinceReply) problems.push(`request ${k} (for u${answering}): ${tag} vanished, in no summarise request the agent answered`);
        if (shown.has(tag) && condensed.has(tag)) problems.push(`request ${k} (for u${answering}): ${tag} shown again after it was condensed`);
      }
    }
    failedSinceReply = false;
  });
  let covered = 0;
  conversation.summaries.forEach((covers, i) => {
    covered += carriedCounts[i] ?? 0;
    if (covers !== covered) problems.push(`summary ${i + 1} claims ${covers} messages; the summarise requests carried ${covered}`);
  });
  return problems;
}

/** One message is shown one way: whole (its speaker first in a group), or cut with a line saying so. */
function checkShown(tag: string, content: string, conversation: Conversation, shownAs: Map<string, string>, problems: string[], k: number): void {
  const sent = conversation.sent.get(tag);
  if (sent === undefined) return;
  if (!content.endsWith(sent) && !content.includes('was cut to fit the context budget')) problems.push(`request ${k}: ${tag} is shown in part without saying so`);
  const before = shownAs.get(tag);
  if (before === undefined) shownAs.set(tag, content);
  else if (before !== content) problems.push(`request ${k}: ${tag} is shown differently than before`);
}
