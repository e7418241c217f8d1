import type { TurnOutcomeKind } from '../../../shared/api';
import type { Agent, AgentResult, TurnMessage } from '../agents/agent';
import { runTurnWithTimeout } from '../agents/timeout';
import type { Clock } from '../clock';
import type { NewReply } from '../delivery/deliverer';
import type { DeliveryService } from '../delivery/delivery-service';
import type { EventBus } from '../events';
import type { Logger } from '../logger';
import type { InboundMessage, IntakeOutcome, PlatformAdapter } from '../platforms/adapter';
import { parseSessionCommand } from '../session/continuation';
import type { SessionStore } from '../session/store';
import type { Turn } from '../session/transcript-record';
import type { ConversationQueue } from './conversation-queue';
import { splitReply } from './reply-chunks';

export interface PipelineOptions {
  readonly sessions: () => SessionStore;
  readonly deliveries: DeliveryService;
  readonly agent: () => { readonly agent: Agent; readonly timeoutMs: number };
  readonly adapter: (platform: string) => PlatformAdapter | undefined;
  readonly queue: ConversationQueue;
  readonly bus: EventBus;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Earlier turns shown to the agent. */
  readonly contextTurns: () => number;
}

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
 *   streamed → obligation recorded (one fsynced group commit, claimed when it
 *   can go now) → assistant turn appended → the reply handed to its
 *   conversation's outbox, which sends in recording order.
 * A conversation's next agent turn starts once the previous reply is recorded,
 * not once it is sent: a slow platform delays only the sending. Conversations
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
    const command = parseSessionCommand(message.text);
    let context: TurnContext;
    try {
      if (message.maybeSeen && this.alreadySaved(key, message.messageRef)) {
        tell('saved');
        return Promise.resolve({ kind: 'ignored' });
      }
      const resolved = command ? sessions.startNewSession(source) : sessions.resolve(source);
      // Durable intake: on disk before it waits for anything, so a crash from here on
      // leaves a saved, unanswered message that the next start answers.
      sessions.appendUserTurn(resolved.sessionId, { source, text: message.text, messageRef: message.messageRef });
      context = turnContext(resolved, source, message);
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
    const turn = command
      ? () => saved.then(() => this.reply(context, 'Started a new conversation. Earlier messages stay in Homing, but the agent no longer sees them.', 'command'))
      : () => saved.then(() => this.answer(context));
    return this.settle(key, turn).finally(() => this.inHand.delete(held));
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
    return this.settle(context.sessionKey, () => this.answer(context));
  }

  /** Sends a fixed reply (not from the agent) through the same durable path. */
  tellUser(context: TurnContext, text: string): Promise<TurnOutcome> {
    return this.settle(context.sessionKey, () => this.reply(context, text, 'command'));
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
  private async settle(key: string, turn: () => Promise<RecordedTurn>): Promise<TurnOutcome> {
    try {
      const recorded = await this.options.queue.run(key, turn);
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
    const { history, current } = this.contextFor(context);

    bus.emit({ type: 'turn.started', sessionId, platform: context.platform, at: clock.now() });
    const controller = new AbortController();
    this.running.set(sessionId, controller);
    const stopTyping = this.showTyping(context);
    let result: AgentResult;
    try {
      const { agent, timeoutMs } = this.options.agent();
      result = await runTurnWithTimeout(
        agent,
        { sessionId, history, message: current, onToken: (text) => bus.emit({ type: 'turn.token', sessionId, text }) },
        { timeoutMs, signal: controller.signal },
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
   */
  private contextFor(context: TurnContext): { history: TurnMessage[]; current: TurnMessage } {
    const contextTurns = this.options.contextTurns();
    const { turns } = this.options.sessions().loadContext(context.sessionId, { maxTurns: contextTurns + LOOKAHEAD_TURNS });
    let at = -1;
    for (let i = turns.length - 1; i >= 0; i--) {
      const turn = turns[i]!;
      if (turn.type === 'user' && turn.messageRef === context.messageRef) {
        at = i;
        break;
      }
    }
    if (at < 0) {
      return { history: turns.slice(-contextTurns).map(toTurnMessage), current: { role: 'user', text: context.text } };
    }
    // Replies recorded after this message answer earlier ones: each goes back next to the message it answers.
    const before: Turn[] = turns.slice(0, at);
    for (const reply of turns.slice(at + 1)) {
      if (reply.type !== 'assistant') continue;
      const asked = reply.replyTo === undefined ? -1 : before.findIndex((turn) => turn.type === 'user' && turn.messageRef === reply.replyTo);
      let place = asked < 0 ? before.length : asked + 1;
      while (place < before.length && before[place]!.type === 'assistant') place++;
      before.splice(place, 0, reply);
    }
    return { history: before.slice(-contextTurns).map(toTurnMessage), current: toTurnMessage(turns[at]!) };
  }

  /**
   * Records the reply, appends it to the transcript, and hands it to its
   * conversation's outbox. From the commit that records it to the handing over
   * nothing awaits, and a row claimed in that commit is held by this process, so
   * no sweep takes this process's fresh row from under its own drain.
   */
  private async reply(context: TurnContext, text: string, kind: TurnOutcomeKind): Promise<RecordedTurn> {
    const { deliveries, bus, clock } = this.options;
    const adapter = this.options.adapter(context.platform);
    const content = text.trim() === '' ? BLANK_REPLY : text;
    const reply: NewReply = {
      sessionKey: context.sessionKey,
      messageRef: context.messageRef,
      chatId: context.chatId,
      threadId: context.threadId,
      replyTo: context.replyTo,
      content,
      chunks: splitReply(content, adapter?.limits ?? FALLBACK_LIMITS),
    };
    // One fsynced group commit records the reply (claimed, when it can go now);
    // from there to the send nothing of this process waits on anything else.
    const recorded = await deliveries.record(context.platform, reply);
    const obligationId = recorded.id;
    try {
      this.options.sessions().appendAssistantTurn(context.sessionId, { obligationId, text: content, replyTo: context.messageRef });
    } catch (error) {
      // The ledger has the reply; recovery appends the line at the next start.
      this.options.logger.error('a reply could not be added to its transcript', { sessionId: context.sessionId, error });
    }
    bus.emit({ type: 'reply.recorded', sessionId: context.sessionId, obligationId, chunks: reply.chunks.length, at: clock.now() });
    const sent = deliveries.sendRecorded(recorded);
    return { outcome: { kind, sessionId: context.sessionId, obligationId }, sent };
  }
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
