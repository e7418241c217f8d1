import type { TurnOutcomeKind } from '../../../shared/api';
import type { Agent, AgentResult, ConversationContext, TurnMessage } from '../agents/agent';
import { runTurnWithTimeout } from '../agents/timeout';
import { modelFamily } from '../agents/token-estimate';
import type { Clock } from '../clock';
import type { NewReply } from '../delivery/deliverer';
import type { DeliveryService } from '../delivery/delivery-service';
import type { EventBus } from '../events';
import type { Logger } from '../logger';
import type { MediaOpener, MediaRef } from '../media/media';
import { keptTranscripts, mediaForAgent, type MediaLimits } from '../media/media-for-agent';
import { MediaStore } from '../media/media-store';
import type { SpeechConfig } from '../media/transcribe';
import type { InboundMessage, IntakeOutcome, PlatformAdapter } from '../platforms/adapter';
import type { SessionSource } from '../session/source';
import type { SessionStore } from '../session/store';
import type { SummaryTurn, Turn } from '../session/transcript-record';
import { HELP_TEXT, isCommandOnly, type ChatCommand, NEW_CONVERSATION_TEXT, parseChatCommand, resetNotice, statusText } from './chat-commands';
import { agentView, fitContext, toTurnMessage, viewStatus, type AgentView, type FitRequest, type Fitted } from './context-fit';
import type { ConversationQueue } from './conversation-queue';
import { conversationContext } from './conversation-context';

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
  /** Whether the agent takes images (it is sent a message's photos as image content). */
  readonly images?: boolean | undefined;
}

/** Where a message's media are kept and what the agent is shown of them (media/). */
export interface PipelineMedia {
  readonly store: MediaStore;
  readonly limits: () => MediaLimits;
  /** How voice notes are transcribed, when a speech server is set up. */
  readonly speech: () => SpeechConfig | undefined;
  /** Tries and waits of each fetch (tests shorten them). */
  readonly fetch?: { readonly attempts?: number; readonly backoffMs?: readonly number[] } | undefined;
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
  /** Answers `/every`, `/once` and `/schedules` (schedules/chat-commands.ts). */
  readonly scheduleCommand?: ((command: Extract<ChatCommand, { command: 'every' | 'once' | 'schedules' }>, where: ScheduleCommandPlace) => string) | undefined;
  /** Photos, voice notes and files; without it a message's media are left as the text describes them. */
  readonly media?: PipelineMedia | undefined;
}

/** Where a schedule command was written. */
export interface ScheduleCommandPlace {
  readonly sessionKey: string;
  readonly platform: string;
  readonly chatType: string;
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
  /** Not taken now (the gateway is stopping): whoever handed it over keeps it for the next start. */
  readonly deferred?: boolean;
  readonly sessionId?: string;
  readonly obligationId?: string;
}

/** A turn whose reply is recorded; `sent` settles once its conversation's outbox has sent what it can. */
interface RecordedTurn {
  readonly outcome: TurnOutcome;
  readonly sent: Promise<unknown>;
}

/** Earlier turns read beyond the context window, to find the message being answered among later arrivals. */
const LOOKAHEAD_TURNS = 50;

/** How far back a possibly redelivered message is looked for. */
const DUPLICATE_LOOKBACK_TURNS = 200;

/** How long turns cut short at a stop get to wind up (their agents are told to stop). */
const STOP_GRACE_MS = 500;

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
      const messageRef = sessions.messageRefFor(source.platform, message.messageRef);
      // A message saved before refs were pseudonyms is in its transcript by its raw ref.
      if (message.maybeSeen && this.alreadySaved(key, [messageRef, message.messageRef])) {
        tell('saved');
        return Promise.resolve({ kind: 'ignored' });
      }
      const resolved = starts ? sessions.startNewSession(source) : sessions.resolve(source);
      if (resolved.status === 'reset' && (resolved.resetReason === 'daily' || resolved.resetReason === 'idle')) reset = resolved.resetReason;
      const text = first ?? message.text;
      // Durable intake: on disk before it waits for anything, so a crash from here on
      // leaves a saved, unanswered message that the next start answers.
      // Media are saved as references with the message; their files are fetched before its turn.
      const media = MediaStore.refsFor(message.media);
      sessions.appendUserTurn(resolved.sessionId, { source, text, messageRef, ...(media.length > 0 ? { media } : {}) });
      context = turnContext(resolved, source, { ...message, messageRef, text });
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
  private alreadySaved(sessionKey: string, messageRefs: readonly string[]): boolean {
    // Read only: the conversation's current session, not resolve() (which may start one).
    const sessions = this.options.sessions();
    const current = sessions.find(sessionKey);
    if (!current) return false;
    const { turns } = sessions.loadContext(current.sessionId, { maxTurns: DUPLICATE_LOOKBACK_TURNS });
    return turns.some((turn) => turn.type === 'user' && turn.messageRef !== undefined && messageRefs.includes(turn.messageRef));
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
      case 'every':
      case 'once':
      case 'schedules':
        return this.reply(context, this.scheduleCommand(command, context), 'command', 'notice');
    }
  }

  /**
   * A schedule's run (schedules/scheduler.ts) in its conversation, in order
   * with the conversation's messages. `prompt`: saved as a message marked
   * scheduled (on disk before the turn starts, so recovery answers it after a
   * crash), then answered by the agent. `text` (the agent is shown it later)
   * and `notice` (it is not): delivered as they are. Idempotent by
   * `messageRef`: a prompt already saved (recovery has it) or a text already
   * recorded is left alone (`ignored`). Throws, in words, when the
   * conversation is not known.
   */
  runScheduled(run: ScheduledRun): Promise<TurnOutcome> {
    if (!this.accepting) return Promise.resolve({ kind: 'ignored', deferred: true });
    const sessions = this.options.sessions();
    const found = sessions.find(run.sessionKey);
    const session = found ?? (run.startWith ? sessions.resolve(run.startWith) : undefined);
    if (!session) throw new Error('its conversation is not known to Homing any more');
    const address = sessions.deliveryAddress(session.sessionId);
    if (!address) throw new Error('its conversation has no address to write to');
    const context = turnContext({ sessionKey: run.sessionKey, sessionId: session.sessionId }, address, { messageRef: run.messageRef, text: run.text });
    if (run.as !== 'prompt') {
      if (this.options.deliveries.ledger.replyFor(run.sessionKey, run.messageRef)) return Promise.resolve({ kind: 'ignored' });
      return this.settle(run.sessionKey, () => this.reply(context, run.text, 'command', run.as === 'text' ? 'scheduled' : 'scheduled-notice'));
    }
    if (this.alreadySaved(run.sessionKey, [run.messageRef])) return Promise.resolve({ kind: 'ignored' });
    sessions.appendScheduledTurn(session.sessionId, { text: run.text, messageRef: run.messageRef, schedule: run.schedule });
    const held = `${context.sessionId} ${context.messageRef}`;
    this.inHand.add(held);
    const saved = this.onDisk(sessions, context.sessionId);
    return this.settle(run.sessionKey, () => this.answer(context), saved).finally(() => this.inHand.delete(held));
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
  /**
   * Stops taking messages and gives running turns `deadlineMs` to finish, then
   * cuts the rest short (their messages stay saved and unanswered: the next
   * start answers them) and waits at most STOP_GRACE_MS for them to wind up.
   * Returns how many turns were cut short.
   */
  async stop(deadlineMs: number): Promise<number> {
    this.accepting = false;
    const drained = this.options.queue.drain();
    const timedOut = await Promise.race([drained.then(() => false), delay(deadlineMs).then(() => true)]);
    if (!timedOut) return 0;
    const cut = this.running.size;
    for (const controller of this.running.values()) controller.abort();
    await Promise.race([drained, delay(STOP_GRACE_MS)]);
    return cut;
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
      const fitted = await this.fitWindow(await this.withMedia(window, context, answering, controller.signal), answering, controller.signal);
      result = await runTurnWithTimeout(
        answering.agent,
        {
          sessionId,
          history: fitted.history,
          message: fitted.current,
          context: fitted.context,
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
   * The message being answered with what its media say (media-for-agent.ts):
   * its files fetched into the data directory, transcripts and documents' text
   * as lines of its text, images and paths as attachments.
   */
  private async withMedia(window: LoadedWindow, context: TurnContext, answering: AnsweringAgent, signal: AbortSignal): Promise<LoadedWindow> {
    const { media } = this.options;
    if (!media || window.media.length === 0) return window;
    const found = await mediaForAgent(context.sessionId, window.media, {
      store: media.store,
      open: openerOf(this.options.adapter(context.platform)),
      limits: media.limits(),
      speech: media.speech(),
      images: answering.images === true,
      signal,
      logger: this.options.logger,
      fetch: media.fetch,
    });
    const text = [window.current.text, ...found.lines].join('\n\n');
    return { ...window, current: { ...window.current, text, ...(found.attachments.length > 0 ? { attachments: found.attachments } : {}) } };
  }

  /**
   * The request within the context budget (context-fit.ts): the agent itself
   * condenses older turns into summary turns, kept in the transcript, when
   * the conversation outgrew the budget; a message too long for it is cut,
   * with a line saying so.
   */
  private fitWindow(window: LoadedWindow, answering: AnsweringAgent, signal: AbortSignal): Promise<Fitted> {
    const sessions = this.options.sessions();
    return fitContext(this.fitRequest(window, answering), {
      sessionId: window.sessionId,
      logger: this.options.logger,
      summarise: (history, ask, context) =>
        runTurnWithTimeout(
          answering.agent,
          { sessionId: window.sessionId, history, message: ask, context, purpose: 'summarise', onToken: () => {} },
          { timeoutMs: answering.timeoutMs, signal },
        ),
      record: (summary) => void sessions.appendSummary(window.sessionId, summary),
    });
  }

  private fitRequest(window: LoadedWindow, answering: AnsweringAgent): FitRequest {
    return {
      view: window.view,
      current: window.current,
      summary: window.summary,
      context: { ...window.conversation, ...(answering.route ? { route: answering.route } : {}) },
      systemPrompt: answering.systemPrompt,
      family: modelFamily(answering.route?.model ?? answering.model),
      budgetTokens: this.options.contextTokens?.() ?? DEFAULT_CONTEXT_TOKENS,
      maxTurns: this.options.contextTurns(),
    };
  }

  /** `/status`: the conversation's key, its messages, the context it uses now, what a summary stands for, and the agent that answers. */
  private status(context: TurnContext): string {
    try {
      const window = this.contextFor(context);
      const answering = this.options.agent(window.subject);
      const request = this.fitRequest(window, answering);
      const seen = viewStatus(request);
      const session = this.options.sessions().get(context.sessionId);
      return statusText({
        sessionKey: context.sessionKey,
        turns: session?.messageCount ?? window.view.turns.length,
        contextTokens: seen.tokens,
        budgetTokens: request.budgetTokens,
        summary: window.summary,
        cutNow: seen.cut,
        agent: answering.label ?? answering.agent.kind,
      });
    } catch (error) {
      this.options.logger.warn('the conversation status could not be read', { sessionId: context.sessionId, error });
      return `Conversation: ${context.sessionKey}`;
    }
  }

  /** `/every`, `/once`, `/schedules`: answered by the schedules (schedules/chat-commands.ts), in words whatever happens. */
  private scheduleCommand(command: Extract<ChatCommand, { command: 'every' | 'once' | 'schedules' }>, context: TurnContext): string {
    const answer = this.options.scheduleCommand;
    if (!answer) return 'Schedules are not available in this conversation.';
    try {
      const session = this.options.sessions().get(context.sessionId);
      return answer(command, { sessionKey: context.sessionKey, platform: context.platform, chatType: session?.chatType ?? 'direct' });
    } catch (error) {
      this.options.logger.error('a schedule command failed', { sessionId: context.sessionId, error });
      return '⚠ Homing could not do that just now; the log says why.';
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
   * What the agent may be shown for this message (context-fit.ts agentView).
   * Turns before the latest summary's `keepFrom` are not read (the summary
   * stands for them); commands and Homing's notices are left out (the agent
   * never saw them).
   */
  private contextFor(context: TurnContext): LoadedWindow {
    const contextTurns = this.options.contextTurns();
    const sessions = this.options.sessions();
    const { turns, summary, truncated } = sessions.loadAgentContext(context.sessionId, contextTurns + LOOKAHEAD_TURNS);
    // Only after summaries failed many turns in a row: the oldest messages are past what is read.
    if (truncated) this.options.logger.warn('older messages no summary stands for are past the read limit; the agent is not shown them', { sessionId: context.sessionId });
    const seen = (turn: Turn) => (turn.type === 'assistant' ? !turn.notice : !isCommandOnly(turn.text));
    const view = this.withTranscripts(agentView(turns, context.messageRef, seen), context.sessionId);
    const answered = view.at < 0 ? undefined : turns[view.at];
    const current = answered ? toTurnMessage(answered) : { role: 'user' as const, text: context.text };
    const session = sessions.get(context.sessionId);
    const conversation = conversationContext(
      session ?? { platform: context.platform, chatType: 'direct', chat: `${context.platform}:unknown`, title: null },
      current,
      this.options.clock.now(),
      { timeZone: this.options.timeZone?.(), instructions: this.readInstructions() },
    );
    return {
      sessionId: context.sessionId,
      view,
      current,
      summary,
      conversation,
      subject: { platform: context.platform, chat: conversation.chat, sender: current.sender?.pseudonym },
      media: answered?.type === 'user' ? (answered.media ?? []) : [],
    };
  }

  /** Earlier messages with the transcripts of their voice notes, as the agent was shown them then. */
  private withTranscripts(view: AgentView, sessionId: string): AgentView {
    const store = this.options.media?.store;
    if (!store || !view.history.some((placed) => placed.turn.type === 'user' && placed.turn.media)) return view;
    const history = view.history.map((placed) => {
      const { turn } = placed;
      if (turn.type !== 'user' || !turn.media) return placed;
      const lines = keptTranscripts(store, sessionId, turn.media);
      return lines.length === 0 ? placed : { ...placed, turn: { ...turn, text: [turn.text, ...lines].join('\n\n') } };
    });
    return { ...view, history };
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
   * answer, like a reset note: it answers nothing, so the message still waits),
   * `scheduled` (a schedule's fixed text: it answers no message, the agent is
   * shown it later), `scheduled-notice` (a schedule's line, like a skipped run:
   * it answers no message, the agent is not shown it).
   */
  private async reply(context: TurnContext, text: string, kind: TurnOutcomeKind, as: ReplyVoice = 'agent'): Promise<RecordedTurn> {
    const { deliveries, bus, clock } = this.options;
    const content = text.trim() === '' ? BLANK_REPLY : text;
    const reply: NewReply = {
      sessionKey: context.sessionKey,
      // An aside is not the message's reply: its own ref, so recovery never takes it for one.
      messageRef: as === 'aside' ? `${context.messageRef}#aside` : context.messageRef,
      chatId: context.chatId,
      threadId: context.threadId,
      replyTo: context.replyTo,
      content,
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
        ...(ANSWERS_NOTHING.has(as) ? {} : { replyTo: context.messageRef }),
        notice: as !== 'agent' && as !== 'scheduled',
      });
    } catch (error) {
      // The ledger has the reply; recovery appends the line at the next start.
      this.options.logger.error('a reply could not be added to its transcript', { sessionId: context.sessionId, error });
    }
    bus.emit({ type: 'reply.recorded', sessionId: context.sessionId, obligationId, chunks: recorded.reply.chunks.length, at: clock.now() });
    const sent = deliveries.sendRecorded(recorded);
    return { outcome: { kind, sessionId: context.sessionId, obligationId }, sent };
  }
}

/** The adapter's way to open its files, bound to it; undefined while the platform has no adapter or offers none. */
function openerOf(adapter: PlatformAdapter | undefined): MediaOpener | undefined {
  const open = adapter?.openMedia;
  return open ? open.bind(adapter) : undefined;
}

/** Who speaks in a reply (Pipeline.reply). */
type ReplyVoice = 'agent' | 'notice' | 'aside' | 'scheduled' | 'scheduled-notice';

/** Replies that answer no saved message: they leave the conversation's waiting count alone. */
const ANSWERS_NOTHING: ReadonlySet<ReplyVoice> = new Set(['aside', 'scheduled', 'scheduled-notice']);

/** A schedule's run as the pipeline takes it (Pipeline.runScheduled). */
export interface ScheduledRun {
  readonly sessionKey: string;
  /** The run's id in its conversation (`schedule:<id>:<due time>`). */
  readonly messageRef: string;
  readonly text: string;
  readonly as: 'prompt' | 'text' | 'notice';
  readonly schedule: { readonly id: number; readonly name: string; readonly when: string };
  /** Where to start the conversation when it has none yet (the window's own chat). */
  readonly startWith?: SessionSource | undefined;
}

/** A turn's context as read from its transcript. */
interface LoadedWindow {
  readonly sessionId: string;
  readonly view: AgentView;
  readonly current: TurnMessage;
  readonly summary: SummaryTurn | undefined;
  /** Without the summary (the fitted request adds it). */
  readonly conversation: ConversationContext;
  readonly subject: RouteSubject;
  /** The media of the message being answered. */
  readonly media: readonly MediaRef[];
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
