import type { AgentResult, ConversationContext, TurnMessage } from '../agents/agent';
import { SHORTEN_SUMMARY_REQUEST, SUMMARISE_REQUEST } from '../agents/system-prompt';
import { truncateToTokens } from '../agents/token-estimate';
import type { Logger } from '../logger';
import type { NewSummary } from '../session/store';
import { turnIdentity, type SummaryTurn, type Turn } from '../session/transcript-record';
import {
  clipMessage,
  messageTokens,
  requestTokens,
  sharesOf,
  summaryTokens,
  systemTokens,
  withinSystemShare,
  type Accounting,
  type Shares,
} from './context-window';

/**
 * Fits a turn's request into the context budget (context-window.ts shares it
 * out). When the turns the agent may be shown are over it, the oldest of them
 * are condensed by the agent itself, in rounds that each fit the budget: each
 * round's request carries the summary so far and the next turns in transcript
 * order, and only a round that succeeded is recorded, with exactly the turns
 * it carried; its `keepFrom` is the turn right after them, so the next load
 * starts there. A turn thus leaves the agent's view only inside a summary
 * request that succeeded. When a round fails, the turns it would have
 * condensed stay in the view (the next turn tries again) and this one request
 * leaves out the oldest of them, logged.
 */

/** A turn of the history with its place among the turns read. */
export interface PlacedTurn {
  readonly turn: Turn;
  readonly file: number;
}

/** What the agent may be shown for one message, read from its transcript. */
export interface AgentView {
  /** The turns read since the latest summary's `keepFrom`, in transcript order. */
  readonly turns: readonly Turn[];
  /** The history in the agent's order (a reply next to the message it answers), commands and notices left out. */
  readonly history: readonly PlacedTurn[];
  /** The message being answered: its place in `turns`, or -1 when it is not among them. */
  readonly at: number;
}

/**
 * The view for the message `messageRef`. Later messages of the conversation
 * may already be saved after it (they were saved on arrival): the turns before
 * it, plus replies recorded since (they answer earlier messages), form the
 * history. `seen` says which turns the agent is shown at all.
 */
export function agentView(turns: readonly Turn[], messageRef: string, seen: (turn: Turn) => boolean): AgentView {
  const placed = turns.map((turn, file) => ({ turn, file }));
  const at = turns.findLastIndex((turn) => turn.type === 'user' && turn.messageRef === messageRef);
  if (at < 0) return { turns, history: placed.filter((p) => seen(p.turn)), at };
  const history = placed.slice(0, at);
  for (const reply of placed.slice(at + 1)) {
    if (reply.turn.type !== 'assistant') continue;
    const replyTo = reply.turn.replyTo;
    const asked = replyTo === undefined ? -1 : history.findIndex((p) => p.turn.type === 'user' && p.turn.messageRef === replyTo);
    let place = asked < 0 ? history.length : asked + 1;
    while (place < history.length && history[place]!.turn.type === 'assistant') place++;
    history.splice(place, 0, reply);
  }
  return { turns, history: history.filter((p) => seen(p.turn)), at };
}

export function toTurnMessage(turn: Turn): TurnMessage {
  if (turn.type === 'assistant') return { role: 'assistant', text: turn.text };
  return { role: 'user', text: turn.text, sender: { pseudonym: turn.sender.id, displayName: turn.sender.name } };
}

export interface FitRequest {
  readonly view: AgentView;
  readonly current: TurnMessage;
  /** The latest summary, if any (the context's `summary` is set from it). */
  readonly summary: SummaryTurn | undefined;
  /** The turn's context, without a summary. */
  readonly context: ConversationContext;
  readonly systemPrompt?: string | undefined;
  readonly family: Accounting['family'];
  readonly budgetTokens: number;
  readonly maxTurns: number;
}

export interface FitDeps {
  /** One summarise request to the agent. */
  summarise(history: readonly TurnMessage[], ask: TurnMessage, context: ConversationContext): Promise<AgentResult>;
  /** Keeps a summary in the transcript; throws when it could not. */
  record(summary: NewSummary): void;
  readonly logger: Logger;
  readonly sessionId: string;
}

export interface Fitted {
  readonly history: TurnMessage[];
  readonly current: TurnMessage;
  /** With the summary, when there is one. */
  readonly context: ConversationContext;
}

/** A history turn as the agent is shown it, with its cost. */
interface Shown extends PlacedTurn {
  readonly message: TurnMessage;
  readonly tokens: number;
  readonly wasCut: boolean;
}

interface SummarySoFar {
  readonly text: string | undefined;
  readonly covers: number;
  readonly cut: number;
}

export async function fitContext(request: FitRequest, deps: FitDeps): Promise<Fitted> {
  const { family, budgetTokens, view } = request;
  const { accounting, shares } = accountingFor(request);
  if (accounting.context.instructions !== request.context.instructions) deps.logger.warn("the owner's instructions were cut to fit the context budget", { sessionId: deps.sessionId, budgetTokens });
  const system = systemTokens(accounting);
  if (shares.message < MIN_MESSAGE_SHARE) deps.logger.warn('the system message leaves too little of the context budget for the conversation', { sessionId: deps.sessionId, tokens: system, budgetTokens });
  const current = clipMessage(request.current, accounting, shares.message);
  const history = view.history.map((placed) => show(placed, accounting, shares));
  const fixed = system + messageTokens(current, accounting);
  const fits = (rest: readonly Shown[], summary: number) => rest.length <= request.maxTurns && fixed + summary + sum(rest) <= budgetTokens;

  let summary: SummarySoFar = { text: request.summary?.text, covers: request.summary?.covers ?? 0, cut: request.summary?.cut ?? 0 };
  let done = 0;
  if (!fits(history, summaryTokens(summary.text, family))) {
    // Condensed with room to spare (half the turns and half the tokens left for the
    // conversation), so the next summary is some turns away, not due on every turn.
    const room = budgetTokens - fixed - shares.summary;
    const roomy = (rest: readonly Shown[]) => rest.length <= Math.ceil(request.maxTurns / 2) && sum(rest) <= room / 2;
    const until = condenseUntil(view, history, (rest) => fits(rest, shares.summary) && roomy(rest), (rest) => fits(rest, shares.summary));
    while (history.some((placed) => placed.file >= done && placed.file < until)) {
      const round = await condenseRound({ request, deps, accounting, shares, history, summary, from: done, until });
      if (!round) break;
      summary = round.summary;
      done = round.next;
    }
  }
  const rest = history.filter((placed) => placed.file >= done);
  // Only after a failed round: the oldest of what is left wait for the next turn's summary.
  let leftOut = 0;
  while (rest.length > 0 && !fits(rest, summaryTokens(summary.text, family))) {
    rest.shift();
    leftOut++;
  }
  if (leftOut > 0) deps.logger.warn('older messages were left out of this request: they could not be condensed yet', { sessionId: deps.sessionId, left: leftOut });
  return {
    history: rest.map((placed) => placed.message),
    current,
    context: summary.text === undefined ? accounting.context : { ...accounting.context, summary: summary.text },
  };
}

/** Below this, a message cut to its share says little more than that it was cut. */
const MIN_MESSAGE_SHARE = 60;

/** The shares of the budget for this turn, and its context with the owner's instructions cut to fit theirs. */
function accountingFor(request: FitRequest): { accounting: Accounting; shares: Shares } {
  const { family, budgetTokens, systemPrompt } = request;
  const context = withinSystemShare({ context: request.context, systemPrompt, family }, sharesOf(budgetTokens, family));
  const accounting: Accounting = { context, systemPrompt, family };
  return { accounting, shares: sharesOf(budgetTokens, family, systemTokens(accounting)) };
}

function show(placed: PlacedTurn, accounting: Accounting, shares: Shares): Shown {
  const whole = toTurnMessage(placed.turn);
  const message = clipMessage(whole, accounting, shares.message);
  return { ...placed, message, tokens: messageTokens(message, accounting), wasCut: message !== whole };
}

function sum(turns: readonly Shown[]): number {
  return turns.reduce((total, turn) => total + turn.tokens, 0);
}

/**
 * Where a summary can end: a place in the transcript whose turn has an
 * identity (the next load starts there), never past the message being
 * answered (it and later arrivals are not condensed now; without it, the
 * newest turn read stays).
 */
function cutPlaces(view: AgentView, history: readonly Shown[]): number[] {
  const last = view.at >= 0 ? view.at : Math.max(-1, ...history.map((placed) => placed.file));
  const places: number[] = [];
  for (let file = 1; file <= last; file++) if (turnIdentity(view.turns[file]!) !== undefined) places.push(file);
  return places;
}

/**
 * The earliest place from which the rest fits with a new summary and leaves
 * room (`roomy`); else the earliest from which it only fits; the latest place
 * when none does.
 */
function condenseUntil(
  view: AgentView,
  history: readonly Shown[],
  roomy: (rest: readonly Shown[]) => boolean,
  fits: (rest: readonly Shown[]) => boolean,
): number {
  const places = cutPlaces(view, history);
  const restFrom = (place: number) => history.filter((placed) => placed.file >= place);
  return places.find((place) => roomy(restFrom(place))) ?? places.find((place) => fits(restFrom(place))) ?? places.at(-1) ?? 0;
}

interface Round {
  readonly request: FitRequest;
  readonly deps: FitDeps;
  readonly accounting: Accounting;
  readonly shares: Shares;
  readonly history: readonly Shown[];
  readonly summary: SummarySoFar;
  /** Condense the history from this place in the transcript… */
  readonly from: number;
  /** …up to (not including) this one. */
  readonly until: number;
}

/**
 * One summarise request: the summary so far and the turns from `from` on
 * that fit the budget with it, recorded once the agent answered. Undefined
 * when it failed: nothing is recorded and those turns stay in the view.
 */
async function condenseRound(round: Round): Promise<{ summary: SummarySoFar; next: number } | undefined> {
  const { accounting, deps, request } = round;
  const ask: TurnMessage = { role: 'user', text: SUMMARISE_REQUEST };
  const base = systemTokens(accounting) + summaryTokens(round.summary.text, accounting.family) + messageTokens(ask, accounting);
  const next = roundEnd(round, base);
  const carried = round.history.filter((placed) => placed.file >= round.from && placed.file < next);
  if (carried.length === 0) {
    deps.logger.error('no message fits a summarise request: the context budget is too small for the system message', { sessionId: deps.sessionId });
    return undefined;
  }
  const context = round.summary.text === undefined ? accounting.context : { ...accounting.context, summary: round.summary.text };
  const answer = await deps.summarise(
    carried.map((placed) => placed.message),
    ask,
    context,
  );
  if (!answer.ok || answer.text.trim() === '') {
    deps.logger.warn('the agent could not condense older messages; they stay and are condensed at a later turn', { sessionId: deps.sessionId, error: answer.ok ? 'empty summary' : answer.error });
    return undefined;
  }
  const { text, trimmed } = await withinSummaryShare(answer.text.trim(), round);
  const inOrder = [...carried].sort((a, b) => a.file - b.file);
  const summary: NewSummary = {
    text,
    keepFrom: turnIdentity(request.view.turns[next]!),
    covers: round.summary.covers + carried.length,
    carried: { from: turnIdentity(inOrder[0]!.turn) ?? '', through: turnIdentity(inOrder.at(-1)!.turn) ?? '', count: carried.length },
    cut: round.summary.cut + carried.filter((placed) => placed.wasCut).length,
    ...(trimmed ? { trimmed } : {}),
  };
  try {
    deps.record(summary);
  } catch (error) {
    deps.logger.error('a summary could not be added to its transcript; its messages stay', { sessionId: deps.sessionId, error });
    return undefined;
  }
  deps.logger.info('condensed older messages into a summary', { sessionId: deps.sessionId, messages: carried.length, covers: summary.covers });
  return { summary: { text, covers: summary.covers, cut: summary.cut ?? 0 }, next };
}

/** The furthest place up to `until` whose turns since `from` fit with `base`. */
function roundEnd(round: Round, base: number): number {
  const { history, from, until, request } = round;
  let end = from;
  for (let place = from + 1; place <= until; place++) {
    if (turnIdentity(request.view.turns[place]!) === undefined) continue;
    const carried = history.filter((placed) => placed.file >= from && placed.file < place);
    if (base + sum(carried) > request.budgetTokens) break;
    end = place;
  }
  return end;
}

/**
 * A summary that outgrew its share is condensed again (a summary of the
 * summary); if the agent's second answer is still too long, or it failed, its
 * end is cut.
 */
async function withinSummaryShare(text: string, round: Round): Promise<{ text: string; trimmed: boolean }> {
  const { accounting, shares, deps } = round;
  const { family } = accounting;
  if (summaryTokens(text, family) <= shares.summary) return { text, trimmed: false };
  const context = { ...accounting.context, summary: undefined };
  const long = clipMessage({ role: 'user', text }, { ...accounting, context }, shares.message);
  const again = await deps.summarise([long], { role: 'user', text: SHORTEN_SUMMARY_REQUEST }, context);
  if (again.ok && again.text.trim() !== '' && summaryTokens(again.text.trim(), family) <= shares.summary) {
    return { text: again.text.trim(), trimmed: false };
  }
  deps.logger.warn('a summary was still too long after condensing it again; its end was cut', { sessionId: deps.sessionId });
  const best = again.ok && again.text.trim() !== '' ? again.text.trim() : text;
  let room = shares.summary - summaryTokens('', family);
  let cut = truncateToTokens(best, room, family);
  while (summaryTokens(cut, family) > shares.summary && room > 0) cut = truncateToTokens(best, --room, family);
  return { text: cut, trimmed: true };
}

/** For `/status`: the request the view makes now (before any condensing), and how many of its messages are shown cut. */
export function viewStatus(request: FitRequest): { readonly tokens: number; readonly cut: number } {
  const { accounting: without, shares } = accountingFor(request);
  const accounting: Accounting = request.summary ? { ...without, context: { ...without.context, summary: request.summary.text } } : without;
  const current = clipMessage(request.current, accounting, shares.message);
  const history = request.view.history.map((placed) => show(placed, accounting, shares));
  const tokens = requestTokens(accounting, history.map((placed) => placed.message), current);
  return { tokens, cut: history.filter((placed) => placed.wasCut).length + (current === request.current ? 0 : 1) };
}
