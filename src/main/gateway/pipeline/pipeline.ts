import type { TurnOutcomeKind } from '../../../shared/api';
import type { Agent, AgentResult, ConversationContext, TurnMessage } from '../agents/agent';
import { SUMMARISE_REQUEST } from '../agents/system-prompt';
import { runTurnWithTimeout } from '../agents/timeout';
import { modelFamily, truncateToTokens } from '../agents/token-estimate';
import type { Clock } from '../clock';
import type { NewReply } from '../delivery/deliverer';
import type { DeliveryService } from '../delivery/delivery-service';
import type { EventBus } from '../events';
import type { Logger } from '../logger';
import type { InboundMessage, IntakeOutcome, PlatformAdapter } from '../platforms/adapter';
import type { SessionStore } from '../session/store';
import { turnIdentity, type SummaryTurn, type Turn } from '../session/transcript-record';
import { HELP_TEXT, isCommandOnly, NEW_CONVERSATION_TEXT, parseChatCommand, resetNotice, statusText } from './chat-commands';
import { condensable, planWindow, requestTokens, type WindowRequest } from './context-window';
import type { ConversationQueue } from './conversation-queue';
import { conversationContext } from './conversation-context';
import { splitReply } from './reply-chunks';

/** Whom a turn is for, as a routing rule matches it: pseudonyms only. */
export interface RouteSubject {
  readonly platform: string;
  /** The chat's pseudonym. */
  readonly chat: string;
  /** The sender's pseudonym. */
  readonly sender: string | undefined;
}

/** The agent that answers a conversation, with what the window and `/status` say about it. */
export interface AnsweringAgent {
  readonly agent: Agent;
  readonly timeoutMs: number;
  /** `openai · llama3.2`, `command · my-agent (rule "work")`: what the window shows. */
  readonly label?: string | undefined;
  /** The model the requests name (picks the token estimate's family). */
  readonly model?: string | undefined;
  /** The agent's system prompt template, when it has one (for the token estimate). */
  readonly systemPrompt?: string | undefined;
  /** The routing rule that chose this agent's settings. */
  readonly route?: ConversationContext['route'];
}

export interface PipelineOptions {
  readonly sessions: () => SessionStore;
  readonly deliveries: DeliveryService;
  /** The agent for a conversation (routing rules may pick settings per platform, chat or sender). */
  readonly agent: (subject?: RouteSubject) => AnsweringAgent;
  readonly adapter: (platform: string) => PlatformAdapter | undefined;
  readonly queue: ConversationQueue;
  readonly bus: EventBus;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Earlier turns shown to the agent at most (older ones are condensed into a summary). */
  readonly contextTurns: () => number;
  /** The context budget in estimated tokens (older turns are condensed beyond it). */
  readonly contextTokens?: (() => number) | undefined;
  /** The owner's instructions file, read per turn. */
  readonly instructions?: (() => string | undefined) | undefined;
  /** The time zone the agent is told (default: this machine's). */
  readonly timeZone?: (() => string | undefined) | undefined;
}

/** The context budget when none is configured: small enough for most local models' default window. */
export const DEFAULT_CONTEXT_TOKENS = 8000;

/** Where a turn came from and where its reply goes. */
export interface TurnContext {
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly platform: string;
  readonly chatId: string;
  readonly threadId: string | null;
  readonly replyTo: string | null;
  /** The user message's ref: part of the reply's obligation id. */
  readonly messageRef: string;
  readonly text: string;
}

/** A turn's context: the session it belongs to, where its reply goes, and the message it answers. */
export function turnContext(
  session: { readonly sessionKey: string; readonly sessionId: string },
  address: { readonly platform: string; readonly chatId: string; readonly threadId?: string | null | undefined },
  message: { readonly messageRef: string; readonly text: string; readonly replyTo?: string | null | undefined },
): TurnContext {
  return {
    sessionKey: session.sessionKey,
    sessionId: session.sessionId,
    platform: address.platform,
    chatId: address.chatId,
    threadId: address.threadId ?? null,
    replyTo: message.replyTo ?? null,
    messageRef: message.messageRef,
    text: message.text,
  };
}

export interface TurnOutcome {
  readonly kind: TurnOutcomeKind | 'ignored';
  readonly sessionId?: string;
  readonly obligationId?: string;
}

/** A turn whose reply is recorded; `sent` settles once its conversation's outbox has sent what it can. */
interface RecordedTurn {
  readonly outcome: TurnOutcome;
  readonly sent: Promise<unknown>;
}

/** Limits for a platform that is not connected right now: its chunks are cut when the reply is recorded. */
const FALLBACK_LIMITS = { maxLength: 4000, unit: 'code-points' } as const;

/** Earlier turns read beyond the context window, to find the message being answered among later arrivals. */
const LOOKAHEAD_TURNS = 50;

/** How far back a possibly redelivered message is looked for. */
const DUPLICATE_LOOKBACK_TURNS = 200;

/** What the user sees when the agent's answer is empty. */
export const BLANK_REPLY = '⚠ The agent answered with an empty message, so this message went unanswered.';

/**
 * One message's way through the gateway:
 *   on arrival: session (key, id) → user turn appended (written at once, its
 *   fdatasync off the event loop), before it waits for anything; then, in its
 *   conversation's order and once that line is on disk: one agent turn,
 *   streamed → obligation recorded (one group commit, claimed when it can go
 *   now) → assistant turn appended → the reply handed to its conversation's
 *   outbox, which sends in recording order once that commit is fsynced.
 * A conversation's next agent turn starts once the previous reply is committed,
 * not once it is on the disk or sent: the fsync and a slow platform delay only
 * the sending. (After a power cut, a reply whose line outlived its record is
 * taken for unanswered: recovery.ts withoutLostReplies.) Conversations
 * run in parallel up to the queue's limit. Every step is announced on the bus.
 */
export class Pipeline {
  private readonly running = new Map<string, AbortController>();
  /** Messages taken by this process and not yet answered (`sessionId messageRef`): recovery leaves them alone. */
  private readonly inHand = new Set<string>();
  private accepting = true;

  constructor(private readonly options: PipelineOptions) {}

  /**
   * Takes an inbound message: saves it at once, then answers it in its
   * conversation's order. Resolves when the reply has been sent (or waits in the
   * ledger), or at once when the message is ignored. `ack`, when given, is told
   * whether the message is saved (see IntakeOutcome) — "saved" once its line is
   * on disk — so an adapter can confirm receipt to its platform only once it is
   * durable.
   */
  handle(message: InboundMessage, ack?: (outcome: IntakeOutcome) => void): Promise<TurnOutcome> {
    const tell = (outcome: IntakeOutcome) => {
      try {
        ack?.(outcome);
      } catch (error) {
        this.options.logger.error('an adapter failed to take an intake acknowledgement', { error });
      }
    };
    if (!this.accepting) {
      tell('not-now');
      return Promise.resolve({ kind: 'ignored' });
    }
    const sessions = this.options.sessions();
    const { source } = message;
    let key: string;
    try {
      key = sessions.sessionKeyFor(source);
    } catch (error) {
      // A source no key can be built from (hostile or broken ids): skipped visibly, never a crash.
      this.options.logger.warn('skipped a message whose source is unusable', { platform: source.platform, error });
      tell('refused');
      return Promise.resolve({ kind: 'ignored' });
    }
    const command = parseChatCommand(message.text);
    const starts = command?.command === 'new' || command?.command === 'reset';
    // `/new some text`: the text is the new conversation's first message, saved and answered as one.
    const first = starts && command.rest !== '' ? command.rest : undefined;
    let context: TurnContext;
    let reset: 'daily' | 'idle' | undefined;
    try {
      if (message.maybeSeen && this.alreadySaved(key, message.messageRef)) {
        tell('saved');
        return Promise.resolve({ kind: 'ignored' });
      }
      const resolved = starts ? sessions.startNewSession(source) : sessions.resolve(source);
      if (resolved.status === 'reset' && (resolved.resetReason === 'daily' || resolved.resetReason === 'idle')) reset = resolved.resetReason;
      const text = first ?? message.text;
      // Durable intake: on disk before it waits for anything, so a crash from here on
      // leaves a saved, unanswered message that the next start answers.
      sessions.appendUserTurn(resolved.sessionId, { source, text, messageRef: message.messageRef });
      context = turnContext(resolved, source, { ...message, text });
    } catch (error) {
      this.options.logger.error('a message could not be saved; it is skipped', { platform: source.platform, error });
      tell('not-now');
      return Promise.resolve({ kind: 'ignored' });
    }
    const held = `${context.sessionId} ${context.messageRef}`;
    this.inHand.add(held);
    // The line is written; its fdatasync runs off the event loop. The adapter hears
    // "saved" (and may confirm receipt to its platform), and the turn starts, once it is on disk.
    const saved = this.onDisk(sessions, context.sessionId).then(() => tell('saved'));
    // A reset policy began this conversation: one short line says so, before the answer.
    if (reset) void this.settle(key, () => this.reply(context, resetNotice(reset), 'command', 'aside'), saved);
    return this.settle(key, () => this.respond(context), saved).finally(() => this.inHand.delete(held));
  }

  /**
   * Resolves once the session's saved messages are on disk. If the fdatasync
   * failed the message is still answered (it is written; only a power cut could
   * lose it now), and the failure is logged.
   */
  private onDisk(sessions: SessionStore, sessionId: string): Promise<void> {
    return sessions.whenDurable(sessionId).catch((error: unknown) => {
      this.options.logger.error('a saved message could not be flushed to disk; answering it anyway', { sessionId, error });
    });
  }

  /**
   * Whether a message the platform hands again is already in its conversation
   * (the previous process saved it, then died before confirming receipt).
   * Recovery answers it if its turn was interrupted.
   */
  private alreadySaved(sessionKey: string, messageRef: string): boolean {
    // Read only: the conversation's current session, not resolve() (which may start one).
    const sessions = this.options.sessions();
    const current = sessions.find(sessionKey);
    if (!current) return false;
    const { turns } = sessions.loadContext(current.sessionId, { maxTurns: DUPLICATE_LOOKBACK_TURNS });
    return turns.some((turn) => turn.type === 'user' && turn.messageRef === messageRef);
  }

  /** Whether this process has taken the message and is answering it (recovery skips those). */
  isInHand(sessionId: string, messageRef: string): boolean {
    return this.inHand.has(`${sessionId} ${messageRef}`);
  }

  /**
   * Answers again a user message whose turn was interrupted (the process died
   * before its reply was recorded); the message is already in the transcript.
   */
  retryInterrupted(context: TurnContext): Promise<TurnOutcome> {
    return this.settle(context.sessionKey, () => this.respond(context));
  }

  /** A saved message's answer: Homing's own for a command, else the agent's. */
  private respond(context: TurnContext): Promise<RecordedTurn> {
    const command = parseChatCommand(context.text);
    // `/new some text` was saved as "some text"; a bare `/new` already started its conversation.
    if (!command || ('rest' in command && command.rest !== '')) return this.answer(context);
    switch (command.command) {
      case 'status':
        return this.reply(context, this.status(context), 'command', 'notice');
      case 'help':
        return this.reply(context, HELP_TEXT, 'command', 'notice');
      case 'new':
      case 'reset':
        return this.reply(context, NEW_CONVERSATION_TEXT, 'command', 'notice');
    }
  }

  /** Sends a fixed reply (not from the agent) through the same durable path. */
  tellUser(context: TurnContext, text: string): Promise<TurnOutcome> {
    return this.settle(context.sessionKey, () => this.reply(context, text, 'command', 'notice'));
  }

  /** Agent turns running now. */
  get turnsRunning(): number {
    return this.running.size;
  }

  cancel(sessionId: string): boolean {
    const controller = this.running.get(sessionId);
    controller?.abort();
    return controller !== undefined;
  }

  /** Stops taking messages; running turns finish (or are cancelled after the deadline). */
  async stop(deadlineMs: number): Promise<void> {
    this.accepting = false;
    const drained = this.options.queue.drain();
    const timedOut = await Promise.race([drained.then(() => false), delay(deadlineMs).then(() => true)]);
    if (timedOut) {
      for (const controller of this.running.values()) controller.abort();
      await Promise.race([drained, delay(2_000)]);
    }
  }

  /** Runs a turn in its conversation's order; resolves once its reply was sent (or is left owed). */
  private async settle(key: string, turn: () => Promise<RecordedTurn>, ready?: Promise<unknown>): Promise<TurnOutcome> {
    try {
      const recorded = await this.options.queue.run(key, turn, ready);
      await recorded.sent;
      return recorded.outcome;
    } catch (error) {
      this.options.logger.error('a turn failed', { error });
      return { kind: 'ignored' };
    }
  }

  private async answer(context: TurnContext): Promise<RecordedTurn> {
    const { bus, clock } = this.options;
    const { sessionId } = context;
    const window = this.contextFor(context);
    const answering = this.options.agent(window.subject);

    bus.emit({ type: 'turn.started', sessionId, platform: context.platform, at: clock.now(), ...(answering.label ? { agent: answering.label } : {}) });
    const controller = new AbortController();
    this.running.set(sessionId, controller);
    const stopTyping = this.showTyping(context);
    let result: AgentResult;
    try {
      const { history, conversation } = await this.fitWindow(context, window, answering, controller.signal);
      result = await runTurnWithTimeout(
        answering.agent,
        {
          sessionId,
          history,
          message: window.current,
          context: conversation,
          purpose: 'reply',
          onToken: (text) => bus.emit({ type: 'turn.token', sessionId, text }),
        },
        { timeoutMs: answering.timeoutMs, signal: controller.signal },
      );
    } catch (error) {
      result = { ok: false, kind: 'failed', error: error instanceof Error ? error.message : String(error) };
    } finally {
      this.running.delete(sessionId);
      stopTyping();
    }
    if (result.ok && result.text.trim() === '') result = { ok: false, kind: 'bad-response', error: 'the reply was empty' };
    const kind: TurnOutcomeKind = result.ok ? 'answered' : result.kind === 'cancelled' ? 'cancelled' : 'agent-error';
    bus.emit({ type: 'turn.finished', sessionId, outcome: kind, error: result.ok ? null : result.error, at: clock.now() });
    if (!result.ok) this.options.logger.warn('the agent failed a turn', { sessionId, kind: result.kind, error: result.error });
    return this.reply(context, result.ok ? result.text : agentErrorReply(result, context.platform), kind);
  }

  /**
   * The history the request carries, within the context budget: when the
   * turns since the last summary are over it (in estimated tokens, or in
   * turns), the agent itself condenses the older ones into a summary turn,
   * kept in the transcript, and the request carries the summary and the newer
   * turns. A failed summary is logged and the turn goes on with what fits.
   */
  private async fitWindow(
    context: TurnContext,
    window: LoadedWindow,
    answering: AnsweringAgent,
    signal: AbortSignal,
  ): Promise<{ history: TurnMessage[]; conversation: ConversationContext }> {
    const budgetTokens = this.options.contextTokens?.() ?? DEFAULT_CONTEXT_TOKENS;
    const maxTurns = this.options.contextTurns();
    const family = modelFamily(answering.route?.model ?? answering.model);
    const conversation: ConversationContext = {
      ...window.conversation,
      ...(answering.route ? { route: answering.route } : {}),
    };
    const history = window.before.map(toTurnMessage);
    const request: WindowRequest = { history, current: window.current, context: conversation, systemPrompt: answering.systemPrompt, family };
    const plan = planWindow(request, { budgetTokens, maxTurns });
    if (plan.kind === 'fits') return { history, conversation };
    if (plan.kind === 'over') {
      this.options.logger.warn('a message alone is over the context budget; it is sent as it is', { sessionId: context.sessionId, tokens: plan.tokens, budgetTokens });
      return { history, conversation };
    }
    const older = history.slice(0, plan.condense);
    const kept = window.before.slice(plan.condense);
    const ask: TurnMessage = { role: 'user', text: SUMMARISE_REQUEST };
    const sent = condensable(request, older, ask, budgetTokens);
    if (sent.length < older.length) {
      this.options.logger.warn('older turns beyond the context budget were left out of the summary', { sessionId: context.sessionId, left: older.length - sent.length });
    }
    const summarised = await runTurnWithTimeout(
      answering.agent,
      { sessionId: context.sessionId, history: sent, message: ask, context: conversation, purpose: 'summarise', onToken: () => {} },
      { timeoutMs: answering.timeoutMs, signal },
    );
    if (!summarised.ok || summarised.text.trim() === '') {
      this.options.logger.warn('the agent could not condense older turns; the oldest are left out instead', {
        sessionId: context.sessionId,
        error: summarised.ok ? 'empty summary' : summarised.error,
      });
      return { history: history.slice(plan.condense), conversation };
    }
    const text = truncateToTokens(summarised.text.trim(), Math.floor(budgetTokens / 4), family);
    // Kept from the earliest kept turn in file order on; with none kept, from the message being answered.
    const keepFrom = firstInFile(window.turns, kept) ?? (window.currentTurn ? turnIdentity(window.currentTurn) : undefined);
    try {
      this.options.sessions().appendSummary(context.sessionId, { text, keepFrom, covers: older.length + (window.summary?.covers ?? 0) });
    } catch (error) {
      this.options.logger.error('a summary could not be added to its transcript', { sessionId: context.sessionId, error });
    }
    this.options.logger.info('condensed older turns into a summary', { sessionId: context.sessionId, turns: older.length, tokensBefore: plan.tokens });
    return { history: kept.map(toTurnMessage), conversation: { ...conversation, summary: text } };
  }

  /** `/status`: the conversation's key, its messages, the context it uses now and the agent that answers. */
  private status(context: TurnContext): string {
    try {
      const window = this.contextFor(context);
      const answering = this.options.agent(window.subject);
      const conversation = { ...window.conversation, ...(answering.route ? { route: answering.route } : {}) };
      const history = window.before.map(toTurnMessage);
      const family = modelFamily(answering.route?.model ?? answering.model);
      const contextTokens = requestTokens({ history, current: window.current, context: conversation, systemPrompt: answering.systemPrompt, family });
      const session = this.options.sessions().get(context.sessionId);
      return statusText({
        sessionKey: context.sessionKey,
        turns: session?.messageCount ?? window.turns.length,
        contextTokens,
        budgetTokens: this.options.contextTokens?.() ?? DEFAULT_CONTEXT_TOKENS,
        summarised: window.summary !== undefined,
        agent: answering.label ?? answering.agent.kind,
      });
    } catch (error) {
      this.options.logger.warn('the conversation status could not be read', { sessionId: context.sessionId, error });
      return `Conversation: ${context.sessionKey}`;
    }
  }

  /** "typing…" on platforms that show it, while the agent works; never lets a failure stop the turn. */
  private showTyping(context: TurnContext): () => void {
    try {
      return this.options.adapter(context.platform)?.typing?.({ chatId: context.chatId, threadId: context.threadId }) ?? (() => {});
    } catch (error) {
      this.options.logger.warn('the typing indicator could not be shown', { platform: context.platform, error });
      return () => {};
    }
  }

  /**
   * The history the agent sees for this message, and the message itself. Later
   * messages of the conversation may already be saved after it (they were saved
   * on arrival), so the message is found by its ref: the turns before it, plus
   * replies recorded since (they answer earlier messages), form the history.
   * Turns before the latest summary are not read (the summary stands for them);
   * commands and Homing's notices are left out (the agent never saw them).
   */
  private contextFor(context: TurnContext): LoadedWindow {
    const contextTurns = this.options.contextTurns();
    const sessions = this.options.sessions();
    const { turns, summary } = sessions.loadAgentContext(context.sessionId, contextTurns + LOOKAHEAD_TURNS);
    let at = -1;
    for (let i = turns.length - 1; i >= 0; i--) {
      const turn = turns[i]!;
      if (turn.type === 'user' && turn.messageRef === context.messageRef) {
        at = i;
        break;
      }
    }
    const seen = (turn: Turn) => (turn.type === 'assistant' ? !turn.notice : !isCommandOnly(turn.text));
    let before: Turn[];
    let current: TurnMessage;
    let currentTurn: Turn | undefined;
    if (at < 0) {
      before = turns.filter(seen);
      current = { role: 'user', text: context.text };
    } else {
      // Replies recorded after this message answer earlier ones: each goes back next to the message it answers.
      before = turns.slice(0, at);
      for (const reply of turns.slice(at + 1)) {
        if (reply.type !== 'assistant') continue;
        const asked = reply.replyTo === undefined ? -1 : before.findIndex((turn) => turn.type === 'user' && turn.messageRef === reply.replyTo);
        let place = asked < 0 ? before.length : asked + 1;
        while (place < before.length && before[place]!.type === 'assistant') place++;
        before.splice(place, 0, reply);
      }
      before = before.filter(seen);
      currentTurn = turns[at]!;
      current = toTurnMessage(currentTurn);
    }
    const session = sessions.get(context.sessionId);
    const conversation = conversationContext(
      session ?? { platform: context.platform, chatType: 'direct', chat: `${context.platform}:unknown`, title: null },
      current,
      this.options.clock.now(),
      { timeZone: this.options.timeZone?.(), instructions: this.readInstructions() },
    );
    return {
      turns,
      before,
      current,
      currentTurn,
      summary,
      conversation: summary ? { ...conversation, summary: summary.text } : conversation,
      subject: { platform: context.platform, chat: conversation.chat, sender: current.sender?.pseudonym },
    };
  }

  private readInstructions(): string | undefined {
    try {
      return this.options.instructions?.();
    } catch (error) {
      this.options.logger.warn('the instructions file could not be read', { error });
      return undefined;
    }
  }

  /**
   * Records the reply, appends it to the transcript, and hands it to its
   * conversation's outbox. From the commit that records it to the handing over
   * nothing awaits, and a row claimed in that commit is held by this process, so
   * no sweep takes this process's fresh row from under its own drain.
   */
  /**
   * `as`: `agent` (the agent's reply), `notice` (Homing's answer to the
   * message: the agent is not shown it), `aside` (Homing's line before the
   * answer, like a reset note: it answers nothing, so the message still waits).
   */
  private async reply(context: TurnContext, text: string, kind: TurnOutcomeKind, as: 'agent' | 'notice' | 'aside' = 'agent'): Promise<RecordedTurn> {
    const { deliveries, bus, clock } = this.options;
    const adapter = this.options.adapter(context.platform);
    const content = text.trim() === '' ? BLANK_REPLY : text;
    const reply: NewReply = {
      sessionKey: context.sessionKey,
      // An aside is not the message's reply: its own ref, so recovery never takes it for one.
      messageRef: as === 'aside' ? `${context.messageRef}#aside` : context.messageRef,
      chatId: context.chatId,
      threadId: context.threadId,
      replyTo: context.replyTo,
      content,
      chunks: splitReply(content, adapter?.limits ?? FALLBACK_LIMITS),
    };
    // The answer is ready: recording and sending it need none of the turn slots.
    this.options.queue.leaveSlot(context.sessionKey);
    // One group commit records the reply (claimed, when it can go now). It resolves at
    // the commit: the next turn may start; the send waits for the commit's fsync.
    const recorded = await deliveries.record(context.platform, reply);
    const obligationId = recorded.id;
    try {
      this.options.sessions().appendAssistantTurn(context.sessionId, {
        obligationId,
        text: content,
        ...(as === 'aside' ? {} : { replyTo: context.messageRef }),
        notice: as !== 'agent',
      });
    } catch (error) {
      // The ledger has the reply; recovery appends the line at the next start.
      this.options.logger.error('a reply could not be added to its transcript', { sessionId: context.sessionId, error });
    }
    bus.emit({ type: 'reply.recorded', sessionId: context.sessionId, obligationId, chunks: reply.chunks.length, at: clock.now() });
    const sent = deliveries.sendRecorded(recorded);
    return { outcome: { kind, sessionId: context.sessionId, obligationId }, sent };
  }
}

/** A turn's context as read from its transcript. */
interface LoadedWindow {
  /** The turns read, in file order. */
  readonly turns: readonly Turn[];
  /** The history the agent is shown (before condensing), oldest first. */
  readonly before: Turn[];
  readonly current: TurnMessage;
  readonly currentTurn: Turn | undefined;
  readonly summary: SummaryTurn | undefined;
  readonly conversation: ConversationContext;
  readonly subject: RouteSubject;
}

/** The identity of the kept turn that comes first in the transcript. */
function firstInFile(turns: readonly Turn[], kept: readonly Turn[]): string | undefined {
  const keep = new Set(kept);
  const first = turns.find((turn) => keep.has(turn));
  return first ? turnIdentity(first) : undefined;
}

function toTurnMessage(turn: Turn): TurnMessage {
  if (turn.type === 'assistant') return { role: 'assistant', text: turn.text };
  return { role: 'user', text: turn.text, sender: { pseudonym: turn.sender.id, displayName: turn.sender.name } };
}

/**
 * What the user sees when the agent failed: short, and says what happened.
 * The details (a program's path, a server's address, stderr) stay on this
 * machine: only the local chat's reply carries them; a chat platform's reply
 * says where to look instead (the log and the window have the details).
 */
export function agentErrorReply(result: Extract<AgentResult, { ok: false }>, platform = 'local'): string {
  if (platform !== 'local') {
    switch (result.kind) {
      case 'cancelled':
        return '⚠ The answer to this message was cancelled.';
      case 'timeout':
        return '⚠ The agent did not answer in time, so this message went unanswered. The owner can see why in Homing’s Status view.';
      default:
        return '⚠ The agent failed, so this message went unanswered. The owner can see why in Homing’s Status view.';
    }
  }
  switch (result.kind) {
    case 'timeout':
      return `⚠ The agent did not answer in time, so this message went unanswered. (${result.error})`;
    case 'cancelled':
      return '⚠ The answer to this message was cancelled.';
    case 'unreachable':
      return `⚠ Homing could not reach the agent: ${result.error}`;
    case 'bad-response':
      return `⚠ The agent answered with something Homing could not read: ${result.error}`;
    case 'failed':
      return `⚠ The agent failed: ${result.error}`;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
