import type { SocketModeClient } from '@slack/socket-mode';
import type { WebClient } from '@slack/web-api';
import type { AdapterEvent, AdapterState, MessageLimits, PlatformAdapter, SendResult, SendTarget } from '../adapter';
import { usualPairingTeller } from '../../access/pairing-replies';
import type { OwedCodes, PairingTeller } from '../../access/pairing-teller';
import { Admission, type AdmissionDecision } from '../skeleton/admission';
import { ReconnectTimer } from '../skeleton/reconnect-timer';
import { AdapterSkeleton, type SkeletonOptions } from '../skeleton/skeleton';
import type { SlackConfig } from './config-schema';
import { compareTs, conversationKey, ConversationPositions, parseConversationKey } from './conversation-positions';
import { parseSlackMessage, SLACK_TS, type IncomingSlackMessage } from './inbound';
import { slackIntake } from './intake';
import { openSlackMedia } from './open-media';
import { MediaFetchError, type MediaBody, type MediaOffer } from '../../media/media';
import { classifyFailure, describe, toSendResult } from './send-errors';
import { newSocketModeClient, newWebClient } from './slack-clients';
import { markdownToSlackMrkdwn } from '../../format/slack-mrkdwn';

/** Who may talk to the agent, and the pairing of new senders (access/pairing-store.ts implements it). */
export interface SlackAccess extends OwedCodes {
  isApproved(senderId: string): boolean;
  requestPairing(sender: { readonly id: string; readonly chatId: string; readonly name: string | undefined }): { readonly code: string } | undefined;
}

export interface SlackAdapterOptions extends SkeletonOptions {
  readonly config: SlackConfig;
  readonly appToken: string;
  readonly botToken: string;
  /** Where the conversation positions are kept. */
  readonly dataDir: string;
  readonly access: SlackAccess;
  /** A 429 longer than this is not waited out inside `send` but handed back to the ledger (default 120 s). */
  readonly maxInlineWaitMs?: number;
  /** How long a new Socket Mode connection may take to say hello (default 30 s). */
  readonly helloTimeoutMs?: number;
}

/** Messages per history read (conversations.history / .replies take up to 999; 200 is Slack's recommendation). */
const PAGE_SIZE = 200;
/** Pages one catch-up of one conversation reads at most: a server that always says "more" cannot keep it busy for ever. */
const MAX_PAGES = 500;
/** Event ids remembered to recognise a re-sent event (Slack re-sends for minutes, not hours). */
const RECENT_EVENTS = 5_000;
const CHANNEL_ID = /^[CGD][A-Z0-9]{2,20}$/;
/** How long a new Socket Mode connection may take to say hello. */
const HELLO_TIMEOUT_MS = 30_000;
/** Web API errors after which a conversation cannot be read any more. */
const GONE = new Set(['channel_not_found', 'not_in_channel', 'is_archived', 'thread_not_found']);

type Taken = 'done' | 'left' | 'not-now';
type HistoryMessage = Record<string, unknown> & { ts: string };

/**
 * Slack through its own libraries: Socket Mode (@slack/socket-mode) for
 * incoming events, the Web API (@slack/web-api) for everything else.
 *
 * Durable intake: an event's envelope is acknowledged only once its message is
 * saved (or known to need nothing), so an event Homing could not save is sent
 * again by Slack, and one sent again after it was saved (`retry_attempt`) is
 * recognised by its `event_id`, or by its conversation's position, and only
 * acknowledged. Messages are taken one at a time in the order they come; a
 * conversation's position (conversation-positions.ts) moves past a message
 * only once the pipeline says it is saved. Slack re-sends an event only a few
 * times, so after every connection the adapter reads, in every conversation
 * it answers in, the history after its position, page by page to the end:
 * nothing written while Homing was away is lost.
 *
 * `chat.postMessage` has no idempotency key: a chunk whose answer was lost
 * may have arrived, and its resend carries the marker (`idempotentSends` false).
 */
export class SlackAdapter implements PlatformAdapter {
  readonly platform = 'slack';
  // chat.postMessage keeps 40 000 characters and advises at most 4 000 (docs.slack.dev, chat.postMessage: "Truncating content").
  readonly limits: MessageLimits = { maxLength: 4000, unit: 'code-points' };
  readonly intake = slackIntake;
  readonly idempotentSends = false;

  private readonly skeleton: AdapterSkeleton;
  private readonly config: SlackConfig;
  private readonly admission: Admission;
  private running = false;
  /** Bumped by every connect/disconnect: work of an older generation stops. */
  private generation = 0;
  private web: WebClient | undefined;
  private socket: SocketModeClient | undefined;
  private bot: { readonly userId: string; readonly name: string; readonly teamId: string } | undefined;
  private positions: ConversationPositions | undefined;
  /** Incoming work (envelopes, catch-ups), one at a time, in order. */
  private intakeLine: Promise<void> = Promise.resolve();
  /** A message could not be saved now: nothing more is taken until the next catch-up, which starts from the positions. */
  private stalled = false;
  /** Conversations whose catch-up has not reached their end yet: their live messages are left to it. */
  private readonly behind = new Set<string>();
  private readonly recentEvents = new Set<string>();
  private catchUpRetry: ReturnType<typeof setTimeout> | undefined;
  private catchUpFailures = 0;
  private readonly reconnect = new ReconnectTimer();
  private readonly pairingTeller: PairingTeller;
  private readonly redactor: (text: string) => string;

  constructor(private readonly options: SlackAdapterOptions) {
    this.config = options.config;
    this.skeleton = new AdapterSkeleton('slack', options);
    this.admission = new Admission(this.config, options.access);
    this.pairingTeller = usualPairingTeller({
      platform: 'slack',
      access: options.access,
      sendNotice: (chatId, text) => this.sendNotice(chatId, text),
      connected: () => this.canSend(),
      logger: this.skeleton.logger,
      now: () => this.skeleton.clock.monotonic(),
    });
    const secrets = [options.appToken, options.botToken].filter((secret) => secret !== '');
    this.redactor = (text) => secrets.reduce((redacted, secret) => redacted.split(secret).join('[token]'), text);
  }

  state(): AdapterState {
    return this.skeleton.status.state;
  }

  /** The bot's name once connected. */
  identity(): { readonly id: string; readonly name: string } | undefined {
    return this.bot ? { id: this.bot.userId, name: this.bot.name } : undefined;
  }

  onEvent(listener: (event: AdapterEvent) => void): () => void {
    return this.skeleton.status.listen(listener);
  }

  canSend(): boolean {
    return this.web !== undefined && this.bot !== undefined && this.skeleton.status.up;
  }

  async connect(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.skeleton.backoff.reset();
    this.start(++this.generation);
  }

  async disconnect(): Promise<void> {
    this.running = false;
    this.generation++;
    this.reconnect.cancel();
    this.cancelCatchUpRetry();
    const socket = this.socket;
    this.socket = undefined;
    if (socket) await closeQuietly(socket);
    this.setState('disconnected');
  }

  /** After a sleep the socket may be dead: a waiting reconnect runs now (the library's pings notice a dead socket by themselves). */
  async probe(): Promise<void> {
    if (this.running) this.reconnect.hurry();
  }

  // ---- connection ------------------------------------------------------

  private alive(generation: number): boolean {
    return this.running && generation === this.generation;
  }

  private start(generation: number): void {
    void this.open(generation).catch((error: unknown) => {
      this.skeleton.logger.error('slack: the connection failed unexpectedly', { error: this.redactor(describe(error)) });
      this.retryLater(generation, `an unexpected error: ${this.redactor(describe(error))}`);
    });
  }

  /** Who the bot is (auth.test), then one Socket Mode connection on a fresh URL. */
  private async open(generation: number): Promise<void> {
    if (!this.skeleton.status.up) this.setState('connecting');
    if (!this.bot || !this.web) {
      const web = await newWebClient(this.options.botToken, this.config.apiUrl, 30_000, this.skeleton.logger, this.redactor);
      let me: { user_id?: unknown; user?: unknown; team_id?: unknown; bot_id?: unknown };
      try {
        me = (await web.auth.test()) as typeof me;
      } catch (error) {
        return this.connectFailed(generation, error, 'bot token');
      }
      if (!this.alive(generation)) return;
      if (typeof me.user_id !== 'string' || !/^[UW][A-Z0-9]{2,20}$/.test(me.user_id) || typeof me.team_id !== 'string' || !/^[TE][A-Z0-9]{2,20}$/.test(me.team_id)) {
        return this.retryLater(generation, 'Slack answered auth.test without a bot user or workspace id');
      }
      if (typeof me.bot_id !== 'string') {
        this.running = false;
        this.setState('auth-failed', 'the bot token belongs to a person, not a bot: paste the bot token (xoxb-…) from OAuth & Permissions');
        return;
      }
      try {
        this.positions ??= ConversationPositions.forBot(this.options.dataDir, me.team_id, me.user_id, this.skeleton.logger);
      } catch (error) {
        this.running = false;
        this.setState('disconnected', `cannot keep Slack's conversation positions in the data directory: ${describe(error)}`);
        return;
      }
      this.web = web;
      this.bot = { userId: me.user_id, name: typeof me.user === 'string' ? me.user.slice(0, 80) : me.user_id, teamId: me.team_id };
    }
    const socket = await newSocketModeClient(this.options.appToken, this.config.apiUrl, this.skeleton.logger, this.redactor);
    if (!this.alive(generation)) return;
    this.socket = socket;
    let connected = false;
    socket.on('slack_event', (envelope: Envelope) => {
      if (this.alive(generation) && this.socket === socket) this.onEnvelope(generation, envelope);
    });
    socket.on('disconnected', () => {
      if (!this.alive(generation) || this.socket !== socket) return;
      this.socket = undefined;
      if (connected) {
        // Slack rotates connections (a `disconnect` message, "refresh_requested"): a fresh one at once.
        this.skeleton.logger.info('slack: the Socket Mode connection closed; opening a new one');
        this.skeleton.backoff.reset();
        this.reconnect.schedule(0, () => {
          if (this.alive(generation)) this.start(generation);
        });
      } else {
        this.retryLater(generation, 'the Socket Mode connection closed before Slack said hello');
      }
    });
    try {
      // A socket that opens but never says hello would hold the adapter in "connecting" for good.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const silent = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error('Slack opened the Socket Mode connection but did not say hello')), this.options.helloTimeoutMs ?? HELLO_TIMEOUT_MS);
      });
      await Promise.race([socket.start(), silent]).finally(() => clearTimeout(timer));
    } catch (error) {
      if (this.socket !== socket) return;
      this.socket = undefined;
      void closeQuietly(socket);
      return this.connectFailed(generation, error, 'app-level token');
    }
    if (!this.alive(generation) || this.socket !== socket) return;
    connected = true;
    this.skeleton.backoff.reset();
    this.skeleton.logger.info('slack: connected', { bot: this.bot.name });
    this.setState('connected');
    this.enqueue(generation, () => this.catchUp(generation));
  }

  private connectFailed(generation: number, error: unknown, which: 'bot token' | 'app-level token'): void {
    if (!this.alive(generation)) return;
    if (error === undefined) return this.retryLater(generation, 'the Socket Mode connection closed before Slack said hello');
    const failure = classifyFailure(error, this.redactor);
    if (failure.kind === 'unauthorized') {
      this.running = false;
      this.setState('auth-failed', `Slack refused the ${which}: ${failure.reason}`);
      return;
    }
    this.retryLater(generation, `cannot reach Slack: ${failure.description}`);
  }

  private retryLater(generation: number, error: string): void {
    if (!this.alive(generation)) return;
    const delay = this.skeleton.backoff.next();
    this.skeleton.status.set('disconnected', error, this.skeleton.clock.now() + delay);
    this.reconnect.schedule(delay, () => {
      if (this.alive(generation)) this.start(generation);
    });
  }

  // ---- receiving -------------------------------------------------------

  private onEnvelope(generation: number, envelope: Envelope): void {
    const ack = () => {
      envelope.ack().catch(() => {
        // The connection is gone: Slack sends the event again, and it is recognised then.
      });
    };
    if (envelope.type !== 'events_api') return ack();
    const body = (typeof envelope.body === 'object' && envelope.body !== null ? envelope.body : {}) as { event_id?: unknown; event?: unknown };
    const eventId = typeof body.event_id === 'string' ? body.event_id.slice(0, 64) : undefined;
    this.enqueue(generation, async () => {
      if (eventId !== undefined && this.recentEvents.has(eventId)) {
        this.skeleton.logger.debug('slack: an event sent again was taken already', { retry: envelope.retry_num, reason: envelope.retry_reason });
        return ack();
      }
      const event = body.event as { type?: unknown } | undefined;
      // Other events (app_mention among them: the message event carries the same message) need nothing.
      const taken = event?.type === 'message' ? await this.take(generation, event, false) : 'done';
      if (taken !== 'done') return;
      if (eventId !== undefined) this.remember(eventId);
      ack();
    });
  }

  private remember(eventId: string): void {
    this.recentEvents.add(eventId);
    if (this.recentEvents.size > RECENT_EVENTS) this.recentEvents.delete(this.recentEvents.values().next().value!);
  }

  private enqueue(generation: number, task: () => Promise<void>): void {
    this.intakeLine = this.intakeLine
      .then(async () => {
        if (this.alive(generation)) await task();
      })
      .catch((error: unknown) => this.skeleton.logger.error('slack: taking a message failed', { error: this.redactor(describe(error)) }));
  }

  /**
   * Reads, per conversation the bot answers in, everything after its position,
   * oldest first, and takes it; `only` limits it to the ones a failed read left behind.
   */
  private async catchUp(generation: number, only?: readonly string[]): Promise<void> {
    const positions = this.positions;
    if (!positions) return;
    this.stalled = false;
    if (only === undefined) this.cancelCatchUpRetry();
    const dms = only === undefined ? await this.listDirectMessages() : [];
    if (!this.alive(generation)) return;
    const keys = only ?? [...new Set([...positions.known(), ...Object.keys(this.config.channels), ...this.behind, ...dms])];
    for (const key of keys) {
      if (!this.alive(generation) || this.stalled) return;
      await this.catchUpConversation(generation, key);
    }
  }

  /**
   * The DMs the bot is in (users.conversations, `types=im`; scope `im:read`),
   * so a DM someone opened while Homing was away is read too, not only once
   * they write again. With `allowlist`, only the listed people's. A failure
   * leaves the catch-up to the DMs already known.
   */
  private async listDirectMessages(): Promise<string[]> {
    const web = this.web;
    if (!web || (this.config.dmPolicy === 'allowlist' && this.config.allowFrom.length === 0)) return [];
    const found: string[] = [];
    let cursor: string | undefined;
    try {
      for (let page = 0; page < 20; page++) {
        const answer = (await web.apiCall('users.conversations', { types: 'im', exclude_archived: true, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) })) as unknown as Record<string, unknown>;
        const channels = Array.isArray(answer.channels) ? (answer.channels as { id?: unknown; user?: unknown; is_user_deleted?: unknown }[]) : [];
        for (const channel of channels) {
          if (typeof channel.id !== 'string' || !/^D[A-Z0-9]{2,20}$/.test(channel.id) || channel.is_user_deleted === true) continue;
          if (this.config.dmPolicy === 'allowlist' && !(typeof channel.user === 'string' && this.config.allowFrom.includes(channel.user))) continue;
          found.push(channel.id);
        }
        cursor = nextCursor({ ...answer, has_more: true });
        if (!cursor) break;
      }
    } catch (error) {
      this.skeleton.logger.warn('slack: could not list the bot’s direct messages; reading the ones it knows', { error: classifyFailure(error, this.redactor).description });
    }
    return found;
  }

  /**
   * One conversation's messages after its position, oldest first. A channel's
   * history holds its top-level messages; a thread under one of them that has
   * replies newer than the position is read after it, from the same position.
   */
  private async catchUpConversation(generation: number, key: string, from?: string): Promise<void> {
    const positions = this.positions!;
    const { channel, threadTs } = parseConversationKey(key);
    if (!CHANNEL_ID.test(channel)) return;
    const after = from ?? positions.last(key);
    this.behind.add(key);
    const read = threadTs === undefined ? await this.readHistory(channel, after) : await this.readReplies(channel, threadTs, after);
    if (read.kind === 'failed') return this.retryCatchUp(generation, key, read.retryAfterMs);
    if (read.kind === 'gone') {
      this.behind.delete(key);
      positions.forget(key);
      return;
    }
    const threads: string[] = [];
    for (const message of read.messages) {
      if (!this.alive(generation) || this.stalled) return;
      if (threadTs !== undefined && message.ts === threadTs) continue;
      const taken = await this.take(generation, { ...message, type: 'message', channel }, true);
      if (taken !== 'done') return;
      if (threadTs === undefined && typeof message.latest_reply === 'string' && SLACK_TS.test(message.latest_reply) && compareTs(message.latest_reply, after) > 0) {
        threads.push(conversationKey(channel, message.ts));
      }
    }
    if (!this.alive(generation) || this.stalled) return;
    const newest = read.messages.at(-1);
    // Every message read is saved or needs nothing: the position moves past them (only conversations the bot answers in are read).
    if (newest) positions.advance(key, newest.ts);
    this.behind.delete(key);
    this.catchUpFailures = 0;
    for (const thread of threads) {
      if (!this.alive(generation) || this.stalled) return;
      if (!positions.has(thread)) await this.catchUpConversation(generation, thread, after);
    }
  }

  /**
   * A channel's top-level messages after `after`: conversations.history
   * answers newest first and pages toward older ones (docs.slack.dev,
   * conversations.history: `oldest`, `cursor`, `has_more`), so all pages back
   * to `after` are read, then taken oldest first.
   */
  private async readHistory(channel: string, after: string): Promise<Read> {
    const messages: HistoryMessage[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await this.call('conversations.history', { channel, oldest: after, inclusive: false, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) });
      if (answer.kind !== 'ok') return answer;
      messages.push(...timestamped(answer.value.messages).filter((message) => compareTs(message.ts, after) > 0));
      cursor = nextCursor(answer.value);
      if (!cursor) return { kind: 'read', messages: sortedUnique(messages) };
    }
    this.skeleton.logger.warn('slack: a channel’s history did not end after many pages; taking what was read', { channel });
    return { kind: 'read', messages: sortedUnique(messages) };
  }

  /** A thread's replies after `after`, oldest first (conversations.replies pages forward; its first message is the thread's root). */
  private async readReplies(channel: string, threadTs: string, after: string): Promise<Read> {
    const messages: HistoryMessage[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await this.call('conversations.replies', { channel, ts: threadTs, oldest: after, inclusive: false, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) });
      if (answer.kind !== 'ok') return answer;
      messages.push(...timestamped(answer.value.messages).filter((message) => compareTs(message.ts, after) > 0));
      cursor = nextCursor(answer.value);
      if (!cursor) break;
    }
    return { kind: 'read', messages: sortedUnique(messages) };
  }

  private async call(method: 'conversations.history' | 'conversations.replies', args: Record<string, unknown>): Promise<{ kind: 'ok'; value: Record<string, unknown> } | Exclude<Read, { kind: 'read' }>> {
    const web = this.web;
    if (!web) return { kind: 'failed', retryAfterMs: undefined };
    try {
      return { kind: 'ok', value: (await web.apiCall(method, args)) as unknown as Record<string, unknown> };
    } catch (error) {
      const failure = classifyFailure(error, this.redactor);
      const name = (error as { data?: { error?: unknown } }).data?.error;
      if (failure.kind === 'permanent' || (typeof name === 'string' && GONE.has(name))) {
        this.skeleton.logger.warn('slack: cannot read a conversation any more; not catching it up', { channel: args.channel, error: failure.description });
        return { kind: 'gone' };
      }
      this.skeleton.logger.warn('slack: could not read the messages missed in a conversation; trying again', { channel: args.channel, error: failure.description });
      return { kind: 'failed', retryAfterMs: failure.kind === 'rate-limited' ? failure.retryAfterMs : undefined };
    }
  }

  /** A read failed (Slack away, a 5xx, a 429): what is left behind is read again later, from its position. */
  private retryCatchUp(generation: number, key: string, retryAfterMs: number | undefined): void {
    if (this.catchUpRetry) return;
    const delay = retryAfterMs ?? Math.min(60_000, 1_000 * 2 ** Math.min(6, this.catchUpFailures++));
    this.skeleton.logger.info('slack: catching up again later', { conversation: key, inMs: delay });
    this.catchUpRetry = setTimeout(() => {
      this.catchUpRetry = undefined;
      // Without a connection, the next one catches up everything, these included.
      if (this.socket) this.enqueue(generation, () => this.catchUp(generation, [...this.behind]));
    }, delay);
    this.catchUpRetry.unref?.();
  }

  private cancelCatchUpRetry(): void {
    clearTimeout(this.catchUpRetry);
    this.catchUpRetry = undefined;
  }

  /**
   * One message, from an event or a catch-up: `done` once it is saved or known
   * to need nothing, `left` when a catch-up takes it in its turn, `not-now`
   * when it could not be saved (Slack is to send it again).
   */
  private async take(generation: number, raw: unknown, fetched: boolean): Promise<Taken> {
    const positions = this.positions;
    const bot = this.bot;
    if (!positions || !bot) return 'left';
    if (this.stalled) return 'left';
    const parsed = parseSlackMessage(raw, bot.userId, undefined, this.config.apiUrl);
    if (parsed.kind === 'ignore') {
      const channel = (raw as { channel?: unknown }).channel;
      if (!fetched && parsed.ts && typeof channel === 'string') this.passOver(conversationKey(channel, parsed.threadTs), parsed.ts);
      return 'done';
    }
    const message = parsed.message;
    const key = conversationKey(message.channel, message.threadTs);
    if (positions.seen(key, message.ts)) return 'done';
    if (!fetched && this.behind.has(key)) return 'left';
    if (!fetched && !positions.has(key)) {
      // Only a conversation the bot answers in gets a position (a busy channel it ignores would crowd them out).
      if (!this.answersIn(message) || this.admit(message) === 'ignore') return 'done';
      // Never answered in before (a DM opened while Homing was down): what was written there since Homing started listening comes first.
      await this.catchUpConversation(generation, key);
      if (positions.seen(key, message.ts)) return 'done';
      if (this.stalled || this.behind.has(key)) return 'left';
    }
    const decision = this.admit(message);
    if (decision === 'pair') {
      const request = this.options.access.requestPairing({ id: message.senderId, chatId: message.channel, name: message.senderName });
      if (request) this.pairingTeller.kick();
    }
    if (decision !== 'agent') {
      if (!fetched) this.passOver(key, message.ts);
      return 'done';
    }
    // A conversation seen for the first time is remembered from just before this message, so a crash
    // before its position moves still has the next start read this message and what follows.
    if (!positions.has(key)) positions.advance(key, tsBefore(message.ts));
    const thread = message.threadTs !== undefined;
    const outcome = await this.skeleton.handOn.handOn({
      source: {
        platform: 'slack',
        chatId: message.channel,
        chatType: message.direct ? 'direct' : thread ? 'thread' : 'channel',
        senderId: message.senderId,
        ...(thread ? { threadId: message.threadTs } : {}),
        ...(message.senderName !== undefined ? { senderName: message.senderName } : {}),
        messageId: message.ts,
      },
      text: message.text,
      messageRef: `sl:${message.channel}:${message.ts}`,
      replyTo: message.ts,
      ...(fetched ? { maybeSeen: true } : {}),
      ...(message.media.length > 0 ? { media: message.media } : {}),
    });
    if (outcome === 'not-now') {
      // Not saved (the gateway is stopping, the disk failed): nothing after it is taken until a
      // catch-up starts again from the positions; Slack sends the unacknowledged events again.
      this.stalled = true;
      setTimeout(() => this.enqueue(generation, () => this.catchUp(generation)), 1_000).unref?.();
      return 'not-now';
    }
    positions.advance(key, message.ts);
    return 'done';
  }

  /** A live message that needs nothing: the position moves past it where the conversation has one and is not being read. */
  private passOver(key: string, ts: string): void {
    if (this.positions?.has(key) && !this.behind.has(key)) this.positions.advance(key, ts);
  }

  /** Whether the bot answers in this message's conversation at all: a DM it may answer, or a listed channel (and its threads). */
  private answersIn(message: IncomingSlackMessage): boolean {
    if (message.direct) return this.config.dmPolicy !== 'allowlist' || this.config.allowFrom.includes(message.senderId);
    return this.config.channels[message.channel] !== undefined;
  }

  private admit(message: IncomingSlackMessage): AdmissionDecision {
    if (message.fromBot) return 'ignore';
    if (message.direct) return this.admission.direct(message.senderId);
    return this.admission.inPlace(message.senderId, this.config.channels[message.channel], () => message.mentionsBot);
  }

  // ---- sending ---------------------------------------------------------

  async send(text: string, target: SendTarget): Promise<SendResult> {
    const channel = target.chatId;
    const threadTs = target.threadId ?? undefined;
    if (!CHANNEL_ID.test(channel)) return { ok: false, retryable: false, permanent: true, notDelivered: true, error: `not a Slack channel id: ${JSON.stringify(channel.slice(0, 40))}` };
    if (threadTs !== undefined && !SLACK_TS.test(threadTs)) return { ok: false, retryable: false, permanent: true, notDelivered: true, error: `not a Slack thread: ${JSON.stringify(threadTs.slice(0, 40))}` };
    const web = this.web;
    if (!web || !this.canSend()) return { ok: false, retryable: true, permanent: false, notDelivered: true, error: 'not connected to Slack' };
    const maxWait = this.options.maxInlineWaitMs ?? 120_000;
    for (let waits = 0; ; waits++) {
      try {
        const sent = (await web.chat.postMessage({ channel, text: markdownToSlackMrkdwn(text), ...(threadTs ? { thread_ts: threadTs } : {}), link_names: false, unfurl_links: false, unfurl_media: false })) as { ts?: unknown };
        return { ok: true, platformMessageId: `${channel}:${typeof sent.ts === 'string' ? sent.ts : 'unknown'}` };
      } catch (error) {
        const failure = classifyFailure(error, this.redactor);
        // A 429 is waited out here, within reason: it costs the reply no attempt (Slack refused the call, nothing arrived).
        if (failure.kind === 'rate-limited' && failure.retryAfterMs <= maxWait && waits < 5 && this.running) {
          this.skeleton.logger.info('slack: rate limited; waiting', { retryAfterMs: failure.retryAfterMs });
          await new Promise((resolve) => setTimeout(resolve, failure.retryAfterMs));
          continue;
        }
        if (failure.kind === 'unauthorized') this.setState('auth-failed', failure.reason);
        return toSendResult(failure);
      }
    }
  }

  /** A short plain message outside the ledger (a pairing code, an approval): best effort, never retried; true once it went out. */
  async sendNotice(chatId: string, text: string): Promise<boolean> {
    if (!CHANNEL_ID.test(chatId) || !this.web) return false;
    try {
      await this.web.chat.postMessage({ channel: chatId, text: markdownToSlackMrkdwn(text).slice(0, 4000), link_names: false });
      return true;
    } catch (error) {
      this.skeleton.logger.warn('slack: a notice could not be sent', { error: classifyFailure(error, this.redactor).description });
      return false;
    }
  }

  /**
   * Fetches a file a message offered (open-media.ts): a GET with the bot token
   * to Slack's file host. Needs no connection (a file of a message saved before
   * a restart is fetched while Socket Mode is still connecting).
   */
  readonly openMedia = async (offer: Pick<MediaOffer, 'kind' | 'source' | 'mime' | 'name'>, options: { readonly signal: AbortSignal; readonly maxBytes: number }): Promise<MediaBody> => {
    try {
      return await openSlackMedia(offer, options, { botToken: this.options.botToken, apiUrl: this.config.apiUrl });
    } catch (error) {
      // Its words go to the agent and the log: never the token.
      if (error instanceof MediaFetchError) throw new MediaFetchError(this.redactor(error.message), error.permanent);
      throw new MediaFetchError(`the file could not be downloaded from Slack: ${this.redactor(describe(error))}`, false);
    }
  };

  // Slack has no "typing…" for bots outside the RTM API (retired for new apps): no `typing` here.

  private setState(state: AdapterState, error?: string): void {
    this.skeleton.status.set(state, error);
  }
}

interface Envelope {
  ack(response?: Record<string, unknown>): Promise<void>;
  readonly envelope_id?: string;
  readonly type?: string;
  readonly body?: unknown;
  readonly retry_num?: number;
  readonly retry_reason?: string;
}

type Read = { kind: 'read'; messages: HistoryMessage[] } | { kind: 'failed'; retryAfterMs: number | undefined } | { kind: 'gone' };

function timestamped(value: unknown): HistoryMessage[] {
  if (!Array.isArray(value)) return [];
  return value.filter((item): item is HistoryMessage => typeof item === 'object' && item !== null && typeof (item as { ts?: unknown }).ts === 'string' && SLACK_TS.test((item as { ts: string }).ts));
}

function sortedUnique(messages: HistoryMessage[]): HistoryMessage[] {
  const byTs = new Map(messages.map((message) => [message.ts, message]));
  return [...byTs.values()].sort((a, b) => compareTs(a.ts, b.ts));
}

function nextCursor(answer: Record<string, unknown>): string | undefined {
  const cursor = (answer.response_metadata as { next_cursor?: unknown } | undefined)?.next_cursor;
  return answer.has_more !== false && typeof cursor === 'string' && cursor !== '' ? cursor.slice(0, 512) : undefined;
}

/** The timestamp just before `ts` (one microsecond earlier). */
export function tsBefore(ts: string): string {
  const [seconds = '0', fraction = '0'] = ts.split('.');
  const micros = BigInt(seconds) * 1_000_000n + BigInt(fraction) - 1n;
  return `${micros / 1_000_000n}.${String(micros % 1_000_000n).padStart(6, '0')}`;
}

/** Closes a Socket Mode client without waiting longer than 2 s for Slack's half of the close handshake. */
async function closeQuietly(socket: SocketModeClient): Promise<void> {
  socket.removeAllListeners('slack_event');
  await Promise.race([socket.disconnect().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2_000).unref?.())]);
}
