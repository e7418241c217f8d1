import type { TurnOutcomeKind } from '../../../shared/api';
import type { Agent, AgentResult, TurnMessage } from '../agents/agent';
import { runTurnWithTimeout } from '../agents/timeout';
import type { Clock } from '../clock';
import type { NewReply } from '../delivery/deliverer';
import type { DeliveryService } from '../delivery/delivery-service';
import type { EventBus } from '../events';
import type { Logger } from '../logger';
import type { InboundMessage, PlatformAdapter } from '../platforms/adapter';
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

/** Limits for a platform that is not connected right now: its chunks are cut when the reply is recorded. */
const FALLBACK_LIMITS = { maxLength: 4000, unit: 'code-points' } as const;

/**
 * One message's way through the gateway:
 *   session (key, id) → user turn appended (fsynced) → one agent turn, streamed →
 *   obligation recorded (durable) → assistant turn appended → sent chunk by chunk.
 * Messages of one conversation are handled in order; conversations run in
 * parallel up to the queue's limit. Every step is announced on the bus.
 */
export class Pipeline {
  private readonly running = new Map<string, AbortController>();
  private accepting = true;

  constructor(private readonly options: PipelineOptions) {}

  /** Takes an inbound message; resolves when it has been answered (or ignored). */
  handle(message: InboundMessage): Promise<TurnOutcome> {
    if (!this.accepting) return Promise.resolve({ kind: 'ignored' });
    let key: string;
    try {
      key = this.options.sessions().sessionKeyFor(message.source);
    } catch (error) {
      // A source no key can be built from (hostile or broken ids): skipped visibly, never a crash.
      this.options.logger.warn('skipped a message whose source is unusable', { platform: message.source.platform, error });
      return Promise.resolve({ kind: 'ignored' });
    }
    return this.options.queue.run(key, () => this.turn(message)).catch((error: unknown) => {
      this.options.logger.error('a turn failed', { platform: message.source.platform, error });
      return { kind: 'ignored' } as const;
    });
  }

  /**
   * Answers again a user message whose turn was interrupted (the process died
   * during the agent's turn); the message is already in the transcript.
   */
  retryInterrupted(context: TurnContext): Promise<TurnOutcome> {
    return this.options.queue.run(context.sessionKey, () => this.answer(context));
  }

  /** Sends a fixed reply (not from the agent) through the same durable path. */
  tellUser(context: TurnContext, text: string): Promise<TurnOutcome> {
    return this.options.queue.run(context.sessionKey, () => this.reply(context, text, 'command'));
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

  private async turn(message: InboundMessage): Promise<TurnOutcome> {
    const sessions = this.options.sessions();
    const { source } = message;
    const command = parseSessionCommand(message.text);
    const resolved = command ? sessions.startNewSession(source) : sessions.resolve(source);
    sessions.appendUserTurn(resolved.sessionId, { source, text: message.text, messageRef: message.messageRef });
    const context = turnContext(resolved, source, message);
    if (command) {
      const text = 'Started a new conversation. Earlier messages stay in Homing, but the agent no longer sees them.';
      return this.reply(context, text, 'command');
    }
    return this.answer(context);
  }

  private async answer(context: TurnContext): Promise<TurnOutcome> {
    const { bus, clock } = this.options;
    const { sessionId } = context;
    // The new message is the last turn in the transcript; the ones before it are the history.
    const loaded = this.options.sessions().loadContext(sessionId, { maxTurns: this.options.contextTurns() + 1 });
    const history = loaded.turns.slice(0, -1).map(toTurnMessage);
    const last = loaded.turns.at(-1);
    const current: TurnMessage = last?.type === 'user' ? toTurnMessage(last) : { role: 'user', text: context.text };

    bus.emit({ type: 'turn.started', sessionId, platform: context.platform, at: clock.now() });
    const controller = new AbortController();
    this.running.set(sessionId, controller);
    let result: AgentResult;
    try {
      const { agent, timeoutMs } = this.options.agent();
      result = await runTurnWithTimeout(
        agent,
        { sessionId, history, message: current, onToken: (text) => bus.emit({ type: 'turn.token', sessionId, text }) },
        { timeoutMs, signal: controller.signal },
      );
    } finally {
      this.running.delete(sessionId);
    }
    const kind: TurnOutcomeKind = result.ok ? 'answered' : result.kind === 'cancelled' ? 'cancelled' : 'agent-error';
    bus.emit({ type: 'turn.finished', sessionId, outcome: kind, error: result.ok ? null : result.error, at: clock.now() });
    if (!result.ok) this.options.logger.warn('the agent failed a turn', { sessionId, kind: result.kind, error: result.error });
    return this.reply(context, result.ok ? result.text : agentErrorReply(result), kind);
  }

  /**
   * Records the reply, appends it to the transcript, and sends it. The three
   * steps run with no await between them: a sweep (which only runs between
   * awaits) never sees this process's fresh pending row before the send starts.
   */
  private async reply(context: TurnContext, text: string, kind: TurnOutcomeKind): Promise<TurnOutcome> {
    const { deliveries, bus, clock } = this.options;
    const adapter = this.options.adapter(context.platform);
    const reply: NewReply = {
      sessionKey: context.sessionKey,
      messageRef: context.messageRef,
      chatId: context.chatId,
      threadId: context.threadId,
      replyTo: context.replyTo,
      content: text,
      chunks: splitReply(text, adapter?.limits ?? FALLBACK_LIMITS),
    };
    const recorded = deliveries.deliverer.recordReply(context.platform, reply);
    const obligationId = recorded.id;
    this.options.sessions().appendAssistantTurn(context.sessionId, { obligationId, text, replyTo: context.messageRef });
    bus.emit({ type: 'reply.recorded', sessionId: context.sessionId, obligationId, chunks: reply.chunks.length, at: clock.now() });
    await deliveries.sendRecorded(context.platform, recorded);
    return { kind, sessionId: context.sessionId, obligationId };
  }
}

function toTurnMessage(turn: Turn): TurnMessage {
  if (turn.type === 'assistant') return { role: 'assistant', text: turn.text };
  return { role: 'user', text: turn.text, sender: { pseudonym: turn.sender.id, displayName: turn.sender.name } };
}

/** What the user sees when the agent failed: short, and says what happened. */
export function agentErrorReply(result: Extract<AgentResult, { ok: false }>): string {
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
