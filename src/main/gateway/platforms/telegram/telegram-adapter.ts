import type { Api } from 'grammy';
import { markdownToPlainText } from '../../format/plain-text';
import { markdownToTelegramHtml } from '../../format/telegram-html';
import type {
  AdapterEvent,
  AdapterState,
  MessageLimits,
  PlatformAdapter,
  SendResult,
  SendTarget,
  TypingTarget,
} from '../adapter';
import { httpMediaBody, MediaFetchError, theMedia, tooLarge, type MediaBody, type MediaOffer } from '../../media/media';
import type { TelegramConfig } from './config-schema';
import { parseUpdate, type BotIdentity, type IncomingTelegramMessage } from './inbound';
import { loadGrammy, loadedGrammy, type Grammy } from './load-grammy';
import { classifyFailure, toSendResult, type CallFailure } from './send-errors';
import { TelegramUpdateState } from './update-state';
import { Admission, type AdmissionDecision } from '../skeleton/admission';
import { ReceiveLoop } from '../skeleton/receive-loop';
import { TypingRepeats } from '../skeleton/typing-repeats';
import { usualPairingTeller } from '../../access/pairing-replies';
import type { OwedCodes, PairingTeller } from '../../access/pairing-teller';
import { historyLostNotice } from '../intake';
import { telegramIntake } from './intake';
import { AdapterSkeleton, type SkeletonOptions } from '../skeleton/skeleton';

/** Who may talk to the agent, and the pairing of new senders (access/pairing-store.ts implements it). */
export interface TelegramAccess extends OwedCodes {
  isApproved(senderId: string): boolean;
  /** Records a pairing request; the code to tell the sender, or undefined when they must not be answered (told recently, denied). */
  requestPairing(sender: { readonly id: string; readonly chatId: string; readonly name: string | undefined }): { readonly code: string } | undefined;
}

export interface TelegramAdapterOptions extends SkeletonOptions {
  readonly config: TelegramConfig;
  readonly token: string;
  /** Where the handled update position and group migrations are kept. */
  readonly dataDir: string;
  readonly access: TelegramAccess;
  /** How long to wait after a 409 (another poller) before polling again (default 10 s). */
  readonly conflictDelayMs?: number;
  /** Interval between typing actions (Telegram shows one for about 5 s; default 4 s). */
  readonly typingIntervalMs?: number;
  /** A retry_after longer than this is not waited out inside `send` but handed back to the ledger (default 120 s). */
  readonly maxInlineWaitMs?: number;
}

/** The most a Bot API answer may weigh (node-fetch `size`): 100 updates are well below it. */
const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** Sends are spaced at least this much (Telegram allows about 30 a second overall). */
const GLOBAL_SPACING_MS = 40;
/** Send attempts inside one `send` (429 waits, plain-text fallback, migration, topic gone). */
const MAX_TRIES = 6;
/**
 * A webhook Homing removed that is back within this time was set again by a
 * program still running: Homing does not fight it on every poll, it tells the
 * user, and removes it again only after this much time.
 */
const WEBHOOK_REMOVAL_SPACING_MS = 60 * 60 * 1000;

/**
 * Telegram through grammY's `Api` (Bot API over HTTPS, `apiRoot` configurable):
 * long polling with durable intake, sends in Telegram's HTML parse mode.
 *
 * Durable intake: an update's offset is confirmed (by the next getUpdates) only
 * after the pipeline says its message is saved. Updates at or below the saved
 * `handled` position are never handled again, and one that was in flight at a
 * crash is checked against the transcript when it comes again. Telegram keeps
 * an update 24 hours: an absence longer than that is told once (intake-gap).
 *
 * Update ids are not forever: after a week without updates Telegram picks the
 * next id at random, and a different Bot API server (`apiRoot`) numbers its
 * own. telegram-bot-api answers an offset beyond its queue's tail from the
 * queue's head, so an update *below* the offset asked for means the numbering
 * changed: the position follows the new numbers (see `followRenumbering`).
 *
 * Telegram has no server-side deduplication (`idempotentSends: false`): a chunk
 * that may have arrived is resent with the marker.
 */
export class TelegramAdapter implements PlatformAdapter {
  readonly platform = 'telegram';
  readonly limits: MessageLimits = { maxLength: 4096, unit: 'code-points' };
  readonly intake = telegramIntake;
  readonly idempotentSends = false;

  /** Logger, clock, state and events, message hand-on, reconnect backoff: what every adapter holds (skeleton/). */
  private readonly skeleton: AdapterSkeleton;
  private readonly config: TelegramConfig;
  private readonly loop: ReceiveLoop;
  private readonly admission: Admission;
  private api: Api | undefined;
  /** The Api files are fetched through: made on first use, so a fetch needs no running poll (after a restart one may come first). */
  private mediaApi: Api | undefined;
  private bot: BotIdentity | undefined;
  private updates: TelegramUpdateState | undefined;
  /** Per chat (and 'all'), when Telegram lets us send again after a 429. */
  private readonly gates = new Map<string, number>();
  private lastSendAt = 0;
  private readonly redactor: (text: string) => string;
  private readonly typingRepeats = new TypingRepeats();
  /** Tells owed pairing codes, at most 20 per 10 minutes, and marks them told once sent. */
  private readonly pairingTeller: PairingTeller;
  /** When Homing last removed a webhook set on the bot (monotonic ms). */
  private webhookRemovedAt: number | undefined;

  constructor(private readonly options: TelegramAdapterOptions) {
    this.config = options.config;
    this.skeleton = new AdapterSkeleton('telegram', options);
    this.pairingTeller = usualPairingTeller({
      platform: 'telegram',
      access: options.access,
      sendNotice: (chatId, text) => this.sendNotice(chatId, text),
      connected: () => this.canSend(),
      logger: this.skeleton.logger,
      now: () => this.skeleton.clock.monotonic(),
    });
    const token = options.token;
    this.redactor = (text) => text.split(token).join('[token]').replace(/bot\d+:[A-Za-z0-9_-]{20,}/g, 'bot[token]');
    this.loop = new ReceiveLoop('telegram', this.skeleton.logger, this.redactor);
    this.admission = new Admission(this.config, options.access);
  }

  state(): AdapterState {
    return this.skeleton.status.state;
  }

  /** The bot's @username once connected (the Test connection names it). */
  identity(): BotIdentity | undefined {
    return this.bot;
  }

  onEvent(listener: (event: AdapterEvent) => void): () => void {
    return this.skeleton.status.listen(listener);
  }

  canSend(): boolean {
    return this.api !== undefined && this.bot !== undefined && this.skeleton.status.up;
  }

  async connect(): Promise<void> {
    if (this.loop.running) return;
    this.skeleton.backoff.reset();
    this.loop.start(
      (generation) => this.run(generation),
      (words) => {
        this.api = undefined;
        this.setState('disconnected', `an unexpected error: ${words}`);
      },
    );
  }

  async disconnect(): Promise<void> {
    this.loop.stop();
    this.typingRepeats.stopAll();
    this.api = undefined;
    this.setState('disconnected');
  }

  /** After a sleep the long poll's socket may be dead: start a fresh poll now. */
  async probe(): Promise<void> {
    this.loop.probe();
  }

  // ---- receiving -------------------------------------------------------

  private async run(generation: number): Promise<void> {
    const alive = () => this.loop.alive(generation);
    while (alive()) {
      this.setState('connecting');
      // A failed load (a broken install) is the receive loop's unexpected error: it tries again.
      const api = this.newApi(await loadGrammy());
      if (!alive()) return;
      let me: { id: number; username?: string };
      try {
        me = await api.getMe();
      } catch (error) {
        if (!alive()) return;
        const failure = classifyFailure(error, this.redactor);
        if (failure.kind === 'unauthorized') {
          this.loop.halt();
          this.setState('auth-failed', `Telegram refused the bot token (${failure.description}): check it with @BotFather`);
          return;
        }
        this.setState('disconnected', `cannot reach Telegram: ${failure.description}`);
        await this.pause(this.skeleton.backoff.next(), generation);
        continue;
      }
      if (!alive()) return;
      this.bot = { id: me.id, username: me.username ?? '' };
      try {
        if (!this.updates) {
          this.updates = TelegramUpdateState.forBot(this.options.dataDir, me.id, this.skeleton.logger);
          if (this.updates.useServer(this.config.apiRoot)) {
            this.skeleton.logger.warn('telegram: the Bot API server changed; its update numbers are its own, so Homing reads what it holds from the start and looks for each message in its conversation first', {});
          }
        }
      } catch (error) {
        this.loop.halt();
        this.setState('disconnected', `cannot keep Telegram's update position in the data directory: ${describe(error)}`);
        return;
      }
      this.api = api;
      this.skeleton.backoff.reset();
      this.skeleton.logger.info('telegram: connected', { bot: `@${this.bot.username}` });
      this.setState('connected');
      const ended = await this.pollLoop(api, generation);
      if (ended === 'stopped') return;
    }
  }

  /** Polls until stopped, or until the connection must be set up again ('reconnect'). */
  private async pollLoop(api: Api, generation: number): Promise<'stopped' | 'reconnect'> {
    const alive = () => this.loop.alive(generation);
    while (alive()) {
      const signal = this.loop.pollSignal();
      let raw: unknown[];
      const handled = this.updates!.handled;
      const offset = handled > 0 ? handled + 1 : undefined;
      try {
        raw = await api.getUpdates(
          {
            ...(offset !== undefined ? { offset } : {}),
            limit: 100,
            timeout: this.config.pollTimeoutSeconds,
            allowed_updates: ['message'],
          },
          signal as never, // grammY types its own AbortSignal shim; node-fetch takes the native one
        );
      } catch (error) {
        if (!alive()) return 'stopped';
        if (signal.aborted) continue; // probe(): poll again at once
        const failure = classifyFailure(error, this.redactor);
        if (failure.kind === 'unauthorized') {
          this.loop.halt();
          this.api = undefined;
          this.setState('auth-failed', `Telegram refused the bot token (${failure.description}): check it with @BotFather`);
          return 'stopped';
        }
        if (failure.kind === 'conflict') {
          // Sends still work; receiving waits until the other poller is gone.
          this.setState('degraded', conflictWords(failure.description));
          await this.pause(this.options.conflictDelayMs ?? 10_000, generation);
          continue;
        }
        if (failure.kind === 'webhook') {
          if ((await this.removeWebhook(api, failure.description)) === 'removed') continue;
          await this.pause(this.options.conflictDelayMs ?? 10_000, generation);
          continue;
        }
        if (failure.kind === 'rate-limited') {
          await this.pause(failure.retryAfterMs, generation, false);
          continue;
        }
        this.api = undefined;
        this.setState('disconnected', `lost Telegram: ${failure.description}`);
        await this.pause(this.skeleton.backoff.next(), generation);
        return 'reconnect';
      } finally {
        this.loop.pollEnded(signal);
      }
      if (!alive()) return 'stopped';
      this.skeleton.backoff.reset();
      if (this.skeleton.status.state !== 'connected') this.setState('connected');
      this.noteAbsence();
      if (!Array.isArray(raw)) {
        // `ok: true` without a list: a broken server. Asking again at once would spin.
        this.skeleton.logger.warn('telegram: getUpdates answered without a list of updates; trying again shortly');
        await this.pause(5_000, generation);
        continue;
      }
      if (raw.length === 0) this.updates!.caughtUp();
      const before = this.updates!.handled;
      this.followRenumbering(raw, offset);
      for (const update of raw) {
        if (!alive()) return 'stopped';
        const taken = await this.take(update);
        // Not saved now (the gateway is stopping, the disk failed): poll again from the same offset.
        if (taken === 'again') {
          await this.pause(1_000, generation);
          break;
        }
      }
      // A batch that moved nothing on (updates without a usable id, the same updates handed again and
      // again by a broken or hostile server) would come straight back: do not spin on it.
      if (raw.length > 0 && this.updates!.handled === before) {
        this.skeleton.logger.warn('telegram: the server keeps handing updates Homing cannot confirm; slowing down', { count: raw.length });
        await this.pause(5_000, generation);
      }
    }
    return 'stopped';
  }

  /**
   * Telegram answered a poll: after an absence longer than it keeps updates,
   * says once that messages may be lost (the renewed `lastPolledAt` keeps a
   * restart from saying it again).
   */
  private noteAbsence(): void {
    const updates = this.updates!;
    const now = this.skeleton.clock.now();
    const last = updates.lastPolledAt;
    if (last !== undefined && now - last > this.intake.keeps.ms) {
      const since = new Date(last).toISOString().replace(/\.\d+Z$/, 'Z');
      this.skeleton.status.emit({ type: 'intake-gap', text: `${historyLostNotice('Telegram', '24 hours')} Homing last reached Telegram at ${since}.` });
    }
    updates.polled(now);
  }

  /**
   * An update below the offset Homing asked for: telegram-bot-api answers from
   * its queue's head only when the offset is beyond the queue's tail
   * (Client::do_get_updates; TQueue::get refuses "from_id is in the future"),
   * so the queue was numbered anew. The position restarts below the lowest of
   * them, and until the queue is read to its end each message is looked for in
   * its conversation first (`rechecking`): one saved under its old number must
   * not be taken twice.
   */
  private followRenumbering(raw: readonly unknown[], offset: number | undefined): void {
    if (offset === undefined) return;
    const ids = raw.map(updateIdOf).filter((id): id is number => id !== undefined);
    const lowest = Math.min(...ids);
    if (!(lowest < offset)) return;
    this.skeleton.logger.warn('telegram: Telegram numbers its updates anew (it does after a week without any, or this is another Bot API server); following the new numbers', {
      asked: offset,
      got: lowest,
    });
    this.updates!.renumber(lowest);
  }

  /**
   * A webhook is set on the bot (a token once used by another framework, or a
   * program using it now), so Telegram refuses getUpdates. grammY's own
   * `bot.start()` removes it; Homing does the same, without
   * `drop_pending_updates`, so the updates waiting stay for Homing. The user
   * is told (intake-gap), because updates sent while the webhook was set may
   * have been handed to it. A webhook back within the hour belongs to a
   * program still running: it is left alone, and the card says so.
   */
  private async removeWebhook(api: Api, description: string): Promise<'removed' | 'left'> {
    const now = this.skeleton.clock.monotonic();
    if (this.webhookRemovedAt !== undefined && now - this.webhookRemovedAt < WEBHOOK_REMOVAL_SPACING_MS) {
      this.setState('degraded', webhookBackWords(description));
      return 'left';
    }
    const info = await api.getWebhookInfo().catch(() => undefined);
    try {
      await api.deleteWebhook();
    } catch (error) {
      this.setState('degraded', `a webhook is set for this bot (Telegram: ${description}) and Homing could not remove it (${classifyFailure(error, this.redactor).description}); it tries again shortly`);
      return 'left';
    }
    this.webhookRemovedAt = now;
    this.skeleton.status.emit({ type: 'intake-gap', text: webhookRemovedWords(info) });
    return 'removed';
  }

  /** One update: 'done' once its message is saved or it is known to need nothing; 'again' to have it redelivered. */
  private async take(raw: unknown): Promise<'done' | 'again'> {
    const bot = this.bot!;
    const updates = this.updates!;
    const parsed = parseUpdate(raw, bot);
    if (parsed.updateId === undefined) return 'done'; // no id: it cannot be confirmed or skipped; nothing to do
    const updateId = parsed.updateId;
    if (updates.wasHandled(updateId)) return 'done';
    switch (parsed.kind) {
      case 'ignore':
        updates.done(updateId);
        return 'done';
      case 'migrated':
        if (updates.migrate(parsed.from, parsed.to)) this.skeleton.logger.info('telegram: a group became a supergroup; its conversation moves along', {});
        updates.done(updateId);
        return 'done';
      case 'message':
        return this.takeMessage(updateId, parsed.message);
    }
  }

  private async takeMessage(updateId: number, message: IncomingTelegramMessage): Promise<'done' | 'again'> {
    const updates = this.updates!;
    const decision = this.admit(message);
    if (decision === 'ignore') {
      updates.done(updateId);
      return 'done';
    }
    if (decision === 'pair') {
      const request = this.options.access.requestPairing({ id: message.senderId!, chatId: message.chatId, name: message.senderName });
      if (request) this.pairingTeller.kick();
      updates.done(updateId);
      return 'done';
    }
    // A group that became a supergroup keeps the conversation of its first id.
    const chatId = updates.original(message.chatId);
    const maybeSeen = updates.rechecking || updates.interrupted === updateId;
    updates.begin(updateId);
    const outcome = await this.skeleton.handOn.handOn(
      {
        source: {
          platform: 'telegram',
          chatId,
          chatType: message.chatType,
          ...(message.senderId !== undefined ? { senderId: message.senderId } : {}),
          ...(message.threadId !== undefined ? { threadId: message.threadId } : {}),
          ...(message.chatName !== undefined ? { chatName: message.chatName } : {}),
          ...(message.senderName !== undefined ? { senderName: message.senderName } : {}),
          messageId: message.messageId,
        },
        text: message.text,
        ...(message.media.length > 0 ? { media: message.media } : {}),
        messageRef: `tg:${chatId}:${message.messageId}`,
        replyTo: message.messageId,
        ...(maybeSeen ? { maybeSeen: true } : {}),
      },
    );
    if (outcome === 'not-now') {
      updates.giveBack();
      return 'again';
    }
    updates.done(updateId);
    return 'done';
  }

  /** Whether a message goes to the agent, gets a pairing code, or is ignored. */
  private admit(message: IncomingTelegramMessage): AdmissionDecision {
    const sender = message.senderId;
    if (sender === undefined || message.senderIsBot) return 'ignore';
    if (message.chatType === 'direct') return this.admission.direct(sender);
    // A group that became a supergroup keeps its settings under either id.
    const updates = this.updates!;
    const group = this.config.groups[updates.original(message.chatId)] ?? this.config.groups[updates.current(message.chatId)] ?? this.config.groups[message.chatId];
    return this.admission.inPlace(sender, group, () => message.addressed);
  }

  // ---- sending ---------------------------------------------------------

  async send(text: string, target: SendTarget): Promise<SendResult> {
    if (!/^-?\d{1,20}$/.test(target.chatId)) return { ok: false, retryable: false, permanent: true, notDelivered: true, error: `not a Telegram chat id: ${JSON.stringify(target.chatId)}` };
    const thread = target.threadId !== null && /^\d{1,12}$/.test(target.threadId) && target.threadId !== '1' ? Number(target.threadId) : undefined;
    const replyTo = target.replyTo !== null && /^\d{1,12}$/.test(target.replyTo) ? Number(target.replyTo) : undefined;
    let html = true;
    let withThread = thread !== undefined;
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      const api = this.api;
      const updates = this.updates;
      if (!api || !updates) return { ok: false, retryable: true, permanent: false, notDelivered: true, error: 'not connected to Telegram' };
      const chatId = updates.current(target.chatId);
      const waited = await this.waitForGate(chatId);
      if (waited !== 'ok') return waited;
      try {
        const sent = await api.sendMessage(chatId, html ? markdownToTelegramHtml(text) : markdownToPlainText(text), {
          ...(html ? { parse_mode: 'HTML' as const } : {}),
          ...(withThread ? { message_thread_id: thread } : {}),
          ...(replyTo !== undefined ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } } : {}),
          link_preview_options: { is_disabled: true },
        });
        return { ok: true, platformMessageId: `${chatId}:${sent.message_id}` };
      } catch (error) {
        const failure = classifyFailure(error, this.redactor);
        const next = this.afterFailure(failure, chatId);
        if (next === 'retry') continue;
        if (next === 'plain') {
          this.skeleton.logger.warn('telegram: the formatted message was refused; sending this part as plain text', { error: failure.description });
          html = false;
          continue;
        }
        if (next === 'no-thread') {
          this.skeleton.logger.warn('telegram: the forum topic is gone; sending to the chat itself', { error: failure.description });
          withThread = false;
          continue;
        }
        return toSendResult(failure);
      }
    }
    return { ok: false, retryable: true, permanent: false, notDelivered: true, error: 'Telegram kept refusing the message; trying again later' };
  }

  private afterFailure(failure: CallFailure, chatId: string): 'retry' | 'plain' | 'no-thread' | 'fail' {
    switch (failure.kind) {
      case 'rate-limited': {
        const until = this.skeleton.clock.now() + failure.retryAfterMs;
        // A second chat limited while the first still waits: Telegram limits the bot as a whole.
        const othersWaiting = [...this.gates].some(([key, at]) => key !== chatId && key !== 'all' && at > this.skeleton.clock.now());
        this.gates.set(chatId, Math.max(this.gates.get(chatId) ?? 0, until));
        if (othersWaiting) this.gates.set('all', Math.max(this.gates.get('all') ?? 0, until));
        return failure.retryAfterMs <= (this.options.maxInlineWaitMs ?? 120_000) ? 'retry' : 'fail';
      }
      case 'migrated':
        // The chat the send went to became `failure.to`: this and later sends (and its messages) follow.
        return this.updates?.migrate(chatId, failure.to) ? 'retry' : 'fail';
      case 'markup':
        return 'plain';
      case 'thread-gone':
        return 'no-thread';
      case 'unauthorized':
        this.setState('auth-failed', `Telegram refused the bot token (${failure.description}): check it with @BotFather`);
        return 'fail';
      default:
        return 'fail';
    }
  }

  /** Waits out a 429 (per chat and global) and the global spacing; a wait beyond the inline limit goes back to the ledger. */
  private async waitForGate(chatId: string): Promise<'ok' | SendResult> {
    const generation = this.loop.generation;
    const until = Math.max(this.gates.get(chatId) ?? 0, this.gates.get('all') ?? 0, this.lastSendAt + GLOBAL_SPACING_MS);
    const wait = until - this.skeleton.clock.now();
    if (wait > (this.options.maxInlineWaitMs ?? 120_000)) {
      return { ok: false, retryable: true, permanent: false, notDelivered: true, retryAfterMs: wait, error: `Telegram asked to wait ${Math.ceil(wait / 1000)} s` };
    }
    if (wait > 0) await this.pause(wait, generation, false);
    if (!this.loop.alive(generation)) return { ok: false, retryable: true, permanent: false, notDelivered: true, error: 'disconnected from Telegram' };
    this.lastSendAt = this.skeleton.clock.now();
    return 'ok';
  }

  /** A short plain message outside the ledger (a pairing code, an approval): best effort, never retried; true once it went out. */
  async sendNotice(chatId: string, text: string): Promise<boolean> {
    if (!/^-?\d{1,20}$/.test(chatId) || !this.api) return false;
    try {
      await this.api.sendMessage(this.updates?.current(chatId) ?? chatId, text);
      return true;
    } catch (error) {
      this.skeleton.logger.warn('telegram: a notice could not be sent', { error: classifyFailure(error, this.redactor).description });
      return false;
    }
  }

  /** Shows "typing…" in the chat until the returned function is called (Telegram shows it for about 5 s, so it is repeated). */
  typing(target: TypingTarget): () => void {
    if (!/^-?\d{1,20}$/.test(target.chatId) || !this.canSend()) return () => {};
    const thread = target.threadId !== null && /^\d{1,12}$/.test(target.threadId) && target.threadId !== '1' ? Number(target.threadId) : undefined;
    const tick = () => {
      const api = this.api;
      const chatId = this.updates?.current(target.chatId) ?? target.chatId;
      if (!api || Math.max(this.gates.get(chatId) ?? 0, this.gates.get('all') ?? 0) > this.skeleton.clock.now()) return;
      api.sendChatAction(chatId, 'typing', thread !== undefined ? { message_thread_id: thread } : {}).catch((error: unknown) => {
        this.skeleton.logger.debug('telegram: typing not shown', { error: classifyFailure(error, this.redactor).description });
      });
    };
    return this.typingRepeats.start(tick, this.options.typingIntervalMs ?? 4_000);
  }

  // ---- files -----------------------------------------------------------

  /**
   * Fetches a file a message offered: getFile for its path, then
   * `{apiRoot}/file/bot<token>/<file_path>`. The token is in both URLs, so no
   * error leaves here without passing the redactor (node-fetch and undici
   * errors name the URL). A size getFile declares over `maxBytes` is refused
   * before downloading; Telegram itself refuses getFile for a file over 20 MB.
   */
  readonly openMedia = async (offer: Pick<MediaOffer, 'kind' | 'source' | 'mime' | 'name'>, options: { readonly signal: AbortSignal; readonly maxBytes: number }): Promise<MediaBody> => {
    const what = theMedia(offer.kind);
    if (!/^[A-Za-z0-9_-]{1,1024}$/.test(offer.source)) throw new MediaFetchError(`${what} has no Telegram file id Homing can use`, true);
    const api = await this.filesApi();
    let file: { file_size?: unknown; file_path?: unknown };
    try {
      file = await api.getFile(offer.source, options.signal as never); // grammY types its own AbortSignal shim
    } catch (error) {
      throw this.getFileFailure(error, what, options.signal);
    }
    const size = file.file_size;
    if (typeof size === 'number' && Number.isFinite(size) && size > options.maxBytes) throw tooLarge(size, options.maxBytes);
    const path = filePath(file.file_path);
    if (path === undefined) throw new MediaFetchError(`Telegram gave no usable download path for ${what}`, false);
    let response: Response;
    try {
      response = await fetch(`${this.config.apiRoot}/file/bot${this.options.token}/${path}`, { signal: options.signal });
    } catch (error) {
      throw new MediaFetchError(`${what} could not be downloaded from Telegram: ${this.fetchWords(error)}`, false);
    }
    const body = httpMediaBody(response, options.maxBytes, what);
    return { ...body, stream: this.redactedStream(body.stream, what) };
  };

  private async filesApi(): Promise<Api> {
    this.mediaApi ??= this.newApi(await loadGrammy());
    return this.mediaApi;
  }

  /**
   * getFile's refusal in words. From telegram-bot-api's Client.cpp: "file is
   * too big" (do_get_file, over MAX_DOWNLOAD_FILE_SIZE = 20 << 20) and an
   * unknown id (400, "invalid file_id") are for good; "wrong file_id or the
   * file is temporarily unavailable" is what on_update_file says for any
   * failed download, 5xx and 429 included, so it is tried again, as are 429,
   * 5xx, a refused token (it may be fixed) and the network.
   */
  private getFileFailure(error: unknown, what: string, signal: AbortSignal): MediaFetchError {
    const grammy = loadedGrammy();
    if (grammy && error instanceof grammy.GrammyError) {
      const code = typeof error.error_code === 'number' ? error.error_code : 0;
      const said = typeof error.description === 'string' ? error.description : '(no description)';
      // Redacted before it is cut: a cut through the token would leave a piece the redactor cannot recognise.
      const telegram = this.redactor(`${code} ${said}`).slice(0, 300);
      const text = said.toLowerCase();
      if (code === 400 && text.includes('file is too big')) return new MediaFetchError(`${what} is too large for a bot to download (Telegram's limit is 20 MB)`, true);
      if (code === 400 && text.includes('temporarily unavailable')) return new MediaFetchError(`Telegram cannot hand over ${what} right now (${telegram})`, false);
      if (code === 400 || code === 403) return new MediaFetchError(`Telegram refused to hand over ${what} (${telegram})`, true);
      if (code === 401 || code === 404) return new MediaFetchError(`Telegram refused the bot token while fetching ${what} (${telegram})`, false);
      return new MediaFetchError(`Telegram could not hand over ${what} (${telegram})`, false);
    }
    const words = signal.aborted ? 'stopped' : this.fetchWords(grammy && error instanceof grammy.HttpError ? error.error : error);
    return new MediaFetchError(`could not ask Telegram for ${what}: ${words}`, false);
  }

  /** The body's chunks, with an error while reading (a dropped connection) redacted as well. */
  private async *redactedStream(stream: AsyncIterable<Uint8Array>, what: string): AsyncIterable<Uint8Array> {
    try {
      yield* stream;
    } catch (error) {
      if (error instanceof MediaFetchError) throw error;
      throw new MediaFetchError(`the download of ${what} broke off: ${this.fetchWords(error)}`, false);
    }
  }

  /** A network error in words, with its cause (undici's "fetch failed" says why only there), the token redacted before it is cut. */
  private fetchWords(error: unknown): string {
    const cause = error instanceof Error && error.cause !== undefined ? `: ${describe(error.cause)}` : '';
    return this.redactor(`${describe(error)}${cause}`).slice(0, 500);
  }

  // ---- plumbing --------------------------------------------------------

  private newApi(grammy: Grammy): Api {
    return new grammy.Api(this.options.token, {
      apiRoot: this.config.apiRoot,
      // The long poll plus a margin; a call that takes longer than this is a dead connection.
      timeoutSeconds: this.config.pollTimeoutSeconds + 15,
      baseFetchConfig: { compress: true, size: MAX_RESPONSE_BYTES } as never,
    });
  }

  /** Sleeps `ms`, or less when disconnected (or probed, unless it is a wait Telegram asked for). */
  private pause(ms: number, generation: number, probeEnds = true): Promise<void> {
    return this.loop.pause(ms, generation, probeEnds);
  }

  private setState(state: AdapterState, error?: string): void {
    this.skeleton.status.set(state, error);
  }

}

function conflictWords(description: string): string {
  return `another program is reading this bot's messages (Telegram: ${description}). Only one program may poll a bot token: stop the other one (another Homing, or a bot using the same token), or create a separate bot with @BotFather`;
}

/** What Homing did about a webhook, in words; `info` is getWebhookInfo's answer (a broken server's may lack anything). */
function webhookRemovedWords(info: { url?: unknown; pending_update_count?: unknown } | undefined): string {
  const host = typeof info?.url === 'string' ? hostOf(info.url) : undefined;
  const count = info?.pending_update_count;
  const waiting = typeof count === 'number' && count > 0 ? ` (the ${count} messages waiting are kept and answered now)` : '';
  return (
    `A webhook was set for this bot${host ? ` (to ${host})` : ''}, probably by another program that used its token, so Telegram handed the bot's messages to it instead of to Homing: ` +
    `messages sent while it was set may have gone to that program. Homing removed the webhook${waiting} and reads the bot's messages again.`
  );
}

function webhookBackWords(description: string): string {
  return `a webhook was set for this bot again (Telegram: ${description}): another program using this token keeps setting one, so Telegram hands it the bot's messages instead of Homing. Stop that program or give it a bot of its own (@BotFather); Homing removes the webhook again at most once an hour`;
}

/** The host of a webhook URL (its path may hold a secret), or undefined when it is not a URL. */
function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host || undefined;
  } catch {
    return undefined;
  }
}

/** An update's id when the server sent a usable one. */
function updateIdOf(update: unknown): number | undefined {
  const id = typeof update === 'object' && update !== null ? (update as { update_id?: unknown }).update_id : undefined;
  return typeof id === 'number' && Number.isSafeInteger(id) ? id : undefined;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}


/**
 * getFile's `file_path` as a URL path: relative segments of a hostile or broken server's answer cannot climb
 * out of `/file/bot<token>/` (`..`), add a query, or name another host. A local server (`--local`) answers an
 * absolute path on its own disk; it is asked for over HTTP all the same (the way other clients do), never read
 * from this machine's disk.
 */
function filePath(path: unknown): string | undefined {
  if (typeof path !== 'string' || path.length === 0 || path.length > 4096) return undefined;
  const absolute = path.startsWith('/');
  const segments = (absolute ? path.slice(1) : path).split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..' || /[\p{Cc}\\]/u.test(segment))) return undefined;
  return (absolute ? '/' : '') + segments.map(encodeURIComponent).join('/');
}
