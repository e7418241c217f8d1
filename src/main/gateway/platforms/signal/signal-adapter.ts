import type { AdapterEvent, AdapterState, MessageLimits, PlatformAdapter, SendResult, SendTarget, TypingTarget } from '../adapter';
import { Admission, type AdmissionDecision } from '../skeleton/admission';
import { ReconnectTimer } from '../skeleton/reconnect-timer';
import { TypingRepeats } from '../skeleton/typing-repeats';
import { AdapterSkeleton, type SkeletonOptions } from '../skeleton/skeleton';
import { usualPairingTeller } from '../../access/pairing-replies';
import type { OwedCodes, PairingTeller } from '../../access/pairing-teller';
import type { SignalConfig } from './config-schema';
import { describeAddress, parseDaemonAddress, type DaemonAddress } from './daemon-address';
import { InboxJournal } from './inbox-journal';
import { chatIdOf, destinationOf, messageRefOf, parseReceived, parseReplyTo, receivedItems, replyToOf, type IncomingSignalMessage, type SignalIdentity } from './inbound';
import { signalIntake } from './intake';
import { RpcConnection, RpcError } from './json-rpc-connection';
import { openSignalMedia } from './open-media';
import type { MediaBody, MediaOffer } from '../../media/media';
import { classifySendFailure, redactNumbers, toSendResult } from './send-errors';
import { signalBody } from './signal-text';
import { howToStartSignalCli, isOutdated, MIN_SIGNAL_CLI_TEXT, parseVersion, versionText } from './version';

/** Who may talk to the agent, and the pairing of new senders (access/pairing-store.ts implements it). */
export interface SignalAccess extends OwedCodes {
  isApproved(senderId: string): boolean;
  requestPairing(sender: { readonly id: string; readonly chatId: string; readonly name: string | undefined }): { readonly code: string } | undefined;
}

export interface SignalAdapterOptions extends SkeletonOptions {
  readonly config: SignalConfig;
  /** Where the inbox journal is kept. */
  readonly dataDir: string;
  readonly access: SignalAccess;
  /** Interval between typing calls (default 10 s). */
  readonly typingIntervalMs?: number;
  /** How long a `send` may take before its fate counts as unknown (default 60 s). */
  readonly sendTimeoutMs?: number;
  /** A rate limit longer than this is not waited out inside `send` but handed back to the ledger (default 120 s). */
  readonly maxInlineWaitMs?: number;
}

/** The adapter's 2 000: signal-cli sends a longer body as a "long text" attachment (ServiceConfig.MAX_MESSAGE_SIZE_BYTES, ManagerImpl.applyMessage). */
export const SIGNAL_MAX_BYTES = 2000;

/**
 * Signal through the signal-cli daemon's JSON-RPC socket (json-rpc-connection.ts).
 *
 * Intake (intake.ts, inbox-journal.ts): with the daemon in manual receive mode,
 * nothing is taken from Signal's server until the adapter subscribes
 * (`subscribeReceive`); each message signal-cli then pushes is written to the
 * inbox journal in the same turn of the event loop that read it, handed to the
 * pipeline in order, and marked done once saved. The subscription ends with
 * the connection (a crash, a stop), so signal-cli stops taking messages the
 * moment Homing is gone; a clean stop unsubscribes and waits for the answer
 * first. A daemon in automatic mode pushes messages without a subscription
 * (and to nobody while Homing is away): the adapter takes them the same way and
 * says once that an outage loses messages.
 *
 * Sends: `send` has no idempotency key (PLATFORMS.md), so a part whose answer
 * did not come back may have arrived: its resend carries the marker.
 *
 * Files (attachments.ts, open-media.ts): signal-cli downloads a message's
 * attachments before it hands the message over; the message is journaled and
 * handed on with offers naming signal-cli's attachment ids, and `openMedia`
 * asks the daemon for the bytes (`getAttachment`) over the same connection.
 */
export class SignalAdapter implements PlatformAdapter {
  readonly platform = 'signal';
  readonly limits: MessageLimits = { maxLength: SIGNAL_MAX_BYTES, unit: 'bytes' };
  readonly intake = signalIntake;
  readonly idempotentSends = false;

  private readonly skeleton: AdapterSkeleton;
  private readonly config: SignalConfig;
  private readonly address: DaemonAddress;
  private readonly admission: Admission;
  private readonly reconnect = new ReconnectTimer();
  private readonly typingRepeats = new TypingRepeats();
  private readonly pairingTeller: PairingTeller;
  private running = false;
  private generation = 0;
  private connection: RpcConnection | undefined;
  private self: SignalIdentity;
  private journal: InboxJournal | undefined;
  /** Incoming work, one message at a time, in order. */
  private intakeLine: Promise<void> = Promise.resolve();
  /** This connection's subscription id, once `subscribeReceive` answered. */
  private subscription: number | undefined;
  private pushModeTold = false;
  /** Refs handed on lately: a message pushed twice (automatic mode and a subscription both) is taken once. */
  private readonly recent = new Set<string>();

  constructor(private readonly options: SignalAdapterOptions) {
    this.config = options.config;
    const address = parseDaemonAddress(options.config.daemon);
    if (!address.ok) throw new Error(`platforms.signal.daemon: ${address.error}`);
    this.address = address.address;
    this.self = { number: options.config.account, uuid: undefined };
    this.skeleton = new AdapterSkeleton('signal', options);
    this.admission = new Admission(this.config, options.access);
    this.pairingTeller = usualPairingTeller({
      platform: 'signal',
      access: options.access,
      sendNotice: (chatId, text) => this.sendNotice(chatId, text),
      connected: () => this.canSend(),
      logger: this.skeleton.logger,
      now: () => this.skeleton.clock.monotonic(),
    });
  }

  state(): AdapterState {
    return this.skeleton.status.state;
  }

  onEvent(listener: (event: AdapterEvent) => void): () => void {
    return this.skeleton.status.listen(listener);
  }

  canSend(): boolean {
    return this.connection?.isOpen === true && this.skeleton.status.up;
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
    this.typingRepeats.stopAll();
    const connection = this.connection;
    this.connection = undefined;
    // signal-cli stops taking messages for Homing once it has answered the unsubscribe; what it pushed before is journaled as it came.
    const subscription = this.subscription;
    this.subscription = undefined;
    if (connection?.isOpen && subscription !== undefined) await connection.call('unsubscribeReceive', { subscription }, 5_000).catch(() => undefined);
    connection?.close();
    this.journal?.close();
    this.journal = undefined;
    this.skeleton.status.set('disconnected');
  }

  async probe(): Promise<void> {
    if (!this.running) return;
    this.reconnect.hurry();
  }

  // ---- connection ------------------------------------------------------

  private alive(generation: number): boolean {
    return this.running && generation === this.generation;
  }

  private start(generation: number): void {
    void this.open(generation).catch((error: unknown) => {
      this.skeleton.logger.error('signal: the connection failed unexpectedly', { error: redactNumbers(describe(error)) });
      this.retryLater(generation, `an unexpected error: ${redactNumbers(describe(error))}`);
    });
  }

  private async open(generation: number): Promise<void> {
    this.skeleton.status.set('connecting');
    const where = describeAddress(this.address);
    // Open before the connection: a daemon in automatic mode pushes messages as soon as Homing connects.
    try {
      this.journal ??= InboxJournal.forAccount(this.options.dataDir, this.config.account, this.skeleton.logger);
    } catch (error) {
      this.running = false;
      this.skeleton.status.set('disconnected', `cannot write Signal's inbox journal in the data directory: ${describe(error)}`);
      return;
    }
    let connection: RpcConnection;
    try {
      connection = await RpcConnection.open(this.address, {
        logger: this.skeleton.logger,
        onNotification: (method, params) => {
          // Taken even while stopping: the journal keeps it for the next start.
          if (method !== 'receive') return;
          if (typeof params === 'object' && params !== null && (params as { subscription?: unknown }).subscription === undefined) this.pushMode();
          this.takeAll(receivedItems('notification', params), generation);
        },
        onClose: (reason) => {
          if (!this.alive(generation) || this.connection !== connection) return;
          this.connection = undefined;
          this.retryLater(generation, `lost the signal-cli daemon at ${where}: ${reason}`);
        },
      });
    } catch (error) {
      this.retryLater(generation, `cannot reach the signal-cli daemon at ${where}: ${describe(error)}. To set it up: ${howToStartSignalCli(where)}`);
      return;
    }
    if (!this.alive(generation)) return connection.close();
    this.connection = connection;
    const checked = await this.check(connection);
    if (!this.alive(generation) || this.connection !== connection) return;
    if (checked.kind === 'fatal') {
      this.running = false;
      this.connection = undefined;
      connection.close();
      this.skeleton.status.set(checked.state, checked.words);
      return;
    }
    if (checked.kind === 'retry') {
      this.connection = undefined;
      connection.close();
      this.retryLater(generation, checked.words);
      return;
    }
    // What an earlier run took from signal-cli but did not see saved comes first.
    for (const { ref, message } of this.journal?.unsaved() ?? []) this.enqueue(generation, () => this.handle(ref, message, true, generation));
    // Is the daemon receiving on its own? `receive` with a timeout of 0 reads nothing new from Signal
    // (it only hands back what signal-cli's cache kept after a failure), and is refused while the daemon receives.
    // Asked twice, 3 s apart: an earlier connection of Homing's may still be ending on the daemon's side.
    for (let probe = 0; probe < 2 && this.alive(generation); probe++) {
      try {
        const kept = await connection.call('receive', { timeout: 0 }, 30_000);
        this.takeAll(receivedItems('result', kept), generation);
        break;
      } catch (error) {
        const refused = error instanceof RpcError && /already being received/i.test(error.message);
        if (!refused) {
          this.skeleton.logger.debug('signal: the receive probe failed', { error: redactNumbers(describe(error)) });
          break;
        }
        if (probe === 1) this.pushMode();
        else await new Promise((resolve) => setTimeout(resolve, 3_000));
      }
    }
    if (!this.alive(generation) || this.connection !== connection) return;
    try {
      const subscription = await connection.call('subscribeReceive', undefined, 30_000);
      if (typeof subscription === 'number') this.subscription = subscription;
    } catch (error) {
      if (!this.alive(generation) || this.connection !== connection) return;
      this.connection = undefined;
      connection.close();
      if (error instanceof RpcError && error.code === -32601) {
        this.running = false;
        this.skeleton.status.set('disconnected', `this signal-cli does not know subscribeReceive: Homing needs signal-cli ${MIN_SIGNAL_CLI_TEXT} or newer`);
        return;
      }
      this.retryLater(generation, `signal-cli did not start receiving for Homing: ${describe(error)}`);
      return;
    }
    if (!this.alive(generation) || this.connection !== connection) return;
    this.skeleton.backoff.reset();
    this.skeleton.status.set('connected');
  }

  /** `version` (signal-cli answers and is new enough), then `getUserStatus` of the account (registered; its UUID, for mentions). */
  private async check(connection: RpcConnection): Promise<{ kind: 'ok' } | { kind: 'fatal'; state: AdapterState; words: string } | { kind: 'retry'; words: string }> {
    let version: unknown;
    try {
      version = await connection.call('version', undefined, 15_000);
    } catch (error) {
      if (error instanceof RpcError && error.code === -32601) {
        return { kind: 'fatal', state: 'disconnected', words: `this signal-cli is too old (it does not know \`version\`): Homing needs signal-cli ${MIN_SIGNAL_CLI_TEXT} or newer` };
      }
      return { kind: 'retry', words: `signal-cli did not answer: ${describe(error)}` };
    }
    const parsed = parseVersion(version);
    if (parsed && isOutdated(parsed)) {
      return { kind: 'fatal', state: 'disconnected', words: `signal-cli ${versionText(version)} is too old: Homing needs ${MIN_SIGNAL_CLI_TEXT} or newer (github.com/AsamK/signal-cli/releases)` };
    }
    try {
      const statuses = await connection.call('getUserStatus', { recipient: [this.config.account] }, 30_000);
      const own = Array.isArray(statuses) ? (statuses[0] as { uuid?: unknown; isRegistered?: unknown } | undefined) : undefined;
      if (own?.isRegistered === false) {
        return { kind: 'fatal', state: 'auth-failed', words: 'Signal says the account signal-cli uses is not registered: link signal-cli again (`signal-cli link -n Homing`) and restart its daemon' };
      }
      if (typeof own?.uuid === 'string') this.self = { number: this.config.account, uuid: own.uuid.toLowerCase() };
    } catch (error) {
      if (error instanceof RpcError && error.code === -32602) {
        // Multi-account daemon without this account, or one started for another number.
        return { kind: 'fatal', state: 'auth-failed', words: `the signal-cli daemon does not serve the account set in Homing (${error.message}): start it with -a and the number you linked` };
      }
      // Signal's servers unreachable from signal-cli: mentions by number still work; the UUID is learnt next time.
      this.skeleton.logger.warn('signal: could not ask Signal about the account; going on', { error: redactNumbers(describe(error)) });
    }
    return { kind: 'ok' };
  }

  private retryLater(generation: number, words: string): void {
    if (!this.alive(generation)) return;
    const delay = this.skeleton.backoff.next();
    this.skeleton.status.set('disconnected', redactNumbers(words), this.skeleton.clock.now() + delay);
    this.reconnect.schedule(delay, () => {
      if (this.alive(generation)) this.start(generation);
    });
  }

  // ---- receiving -------------------------------------------------------

  private pushMode(): void {
    if (this.pushModeTold) return;
    this.pushModeTold = true;
    this.skeleton.status.emit({
      type: 'intake-gap',
      text: 'signal-cli is already receiving messages on its own (its daemon was started without --receive-mode manual, or another program takes them): messages that arrive while Homing is not connected to it are lost. Restart the daemon with --receive-mode manual.',
    });
    this.skeleton.logger.warn('signal: the daemon is not in manual receive mode; taking the messages it pushes');
  }

  /** A pushed `receive` notification (automatic mode): journaled at once, then handed on in order. */
  private takeAll(items: readonly unknown[], generation: number): void {
    void this.handOnAll(this.journalAll(items), generation);
  }

  /**
   * Writes every message of an answer or notification to the journal, at once
   * and synchronously: nothing else runs between reading a message and writing
   * it down.
   */
  private journalAll(items: readonly unknown[]): { ref: string; message: IncomingSignalMessage }[] {
    const journal = this.journal;
    const taken: { ref: string; message: IncomingSignalMessage }[] = [];
    for (const item of items) {
      const parsed = parseReceived(item, this.self);
      if (parsed.kind === 'ignore') {
        this.skeleton.logger.debug('signal: passed over a received envelope', { why: parsed.why });
        continue;
      }
      const ref = messageRefOf(parsed.message);
      if (this.recent.has(ref)) continue;
      this.recent.add(ref);
      if (this.recent.size > 1_000) this.recent.delete(this.recent.values().next().value!);
      try {
        journal?.got(ref, parsed.message);
      } catch (error) {
        this.skeleton.logger.error('signal: could not write a received message to the inbox journal', { error: describe(error) });
      }
      taken.push({ ref, message: parsed.message });
    }
    return taken;
  }

  /** Hands the messages on in order; resolves once all are saved or need nothing. */
  private handOnAll(taken: readonly { ref: string; message: IncomingSignalMessage }[], generation: number): Promise<void> {
    let last: Promise<void> = Promise.resolve();
    for (const { ref, message } of taken) last = this.enqueue(generation, () => this.handle(ref, message, false, generation));
    return last;
  }

  private enqueue(generation: number, task: () => Promise<void>): Promise<void> {
    this.intakeLine = this.intakeLine
      .then(async () => {
        if (this.alive(generation)) await task();
      })
      .catch((error: unknown) => this.skeleton.logger.error('signal: taking a message failed', { error: redactNumbers(describe(error)) }));
    return this.intakeLine;
  }

  /** One message: admitted or not, handed to the pipeline until it is saved, then marked done in the journal. */
  private async handle(ref: string, message: IncomingSignalMessage, fromJournal: boolean, generation: number): Promise<void> {
    const journal = this.journal;
    const decision = this.admit(message);
    if (decision === 'pair') {
      const request = this.options.access.requestPairing({ id: message.author, chatId: message.author, name: message.authorName });
      if (request) this.pairingTeller.kick();
    }
    if (decision !== 'agent') {
      journal?.done(ref);
      return;
    }
    const group = message.groupId !== undefined;
    for (let attempt = 0; this.alive(generation); attempt++) {
      const outcome = await this.skeleton.handOn.handOn({
        source: {
          platform: 'signal',
          chatId: chatIdOf(message),
          chatType: group ? 'group' : 'direct',
          senderId: message.author,
          ...(message.groupName !== undefined ? { chatName: message.groupName } : {}),
          ...(message.authorName !== undefined ? { senderName: message.authorName } : {}),
          messageId: String(message.timestamp),
        },
        text: message.text,
        messageRef: ref,
        replyTo: replyToOf(message),
        ...(fromJournal ? { maybeSeen: true } : {}),
        ...(message.media !== undefined && message.media.length > 0 ? { media: message.media } : {}),
      });
      if (outcome !== 'not-now') {
        journal?.done(ref);
        return;
      }
      // Not saved now (the gateway is stopping, the disk failed): the journal keeps it; try again shortly.
      await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 1_000 * 2 ** Math.min(attempt, 5))));
    }
  }

  private admit(message: IncomingSignalMessage): AdmissionDecision {
    const ids = [message.authorUuid, message.authorNumber].filter((id): id is string => id !== undefined);
    if (message.groupId === undefined) {
      const decisions = ids.map((id) => this.admission.direct(id));
      return decisions.includes('agent') ? 'agent' : decisions.includes('pair') ? 'pair' : 'ignore';
    }
    const place = this.config.groups[message.groupId];
    return ids.some((id) => this.admission.inPlace(id, place, () => message.addressed) === 'agent') ? 'agent' : 'ignore';
  }

  // ---- files -----------------------------------------------------------

  /**
   * Fetches a file a message offered (open-media.ts): `getAttachment` over the
   * daemon connection, which must be open (otherwise the fetch is tried again
   * later). The daemon's copy stays where signal-cli keeps it.
   */
  readonly openMedia = (offer: Pick<MediaOffer, 'kind' | 'source' | 'mime' | 'name'>, options: { readonly signal: AbortSignal; readonly maxBytes: number }): Promise<MediaBody> =>
    openSignalMedia(offer, options, this.connection);

  // ---- sending ---------------------------------------------------------

  async send(text: string, target: SendTarget): Promise<SendResult> {
    const destination = destinationOf(target.chatId);
    if (!destination) return { ok: false, retryable: false, permanent: true, notDelivered: true, error: 'not a Signal recipient or group' };
    const connection = this.connection;
    if (!connection || !this.canSend()) return { ok: false, retryable: true, permanent: false, notDelivered: true, error: 'not connected to the signal-cli daemon' };
    const rendered = signalBody(text, SIGNAL_MAX_BYTES);
    const quote = parseReplyTo(target.replyTo);
    const params = {
      ...destination,
      message: rendered.text,
      ...(rendered.textStyle.length > 0 ? { textStyle: rendered.textStyle } : {}),
      ...(quote ? { quoteTimestamp: quote.timestamp, quoteAuthor: quote.author } : {}),
    };
    const generation = this.generation;
    for (;;) {
      try {
        const result = (await connection.call('send', params, this.options.sendTimeoutMs ?? 60_000)) as { timestamp?: unknown } | null;
        const timestamp = typeof result?.timestamp === 'number' ? String(result.timestamp) : 'unknown';
        return { ok: true, platformMessageId: timestamp };
      } catch (error) {
        const failure = classifySendFailure(error);
        // A rate limit is waited out here, as Signal asks, without spending one of the ledger's attempts;
        // a longer one (or a stop meanwhile) goes back to the ledger with its wait.
        if (failure.kind !== 'rate-limited' || failure.retryAfterMs > (this.options.maxInlineWaitMs ?? 120_000)) return toSendResult(failure);
        this.skeleton.logger.info('signal: rate limited; waiting', { retryAfterMs: failure.retryAfterMs });
        await new Promise((resolve) => setTimeout(resolve, failure.retryAfterMs));
        if (!this.alive(generation) || this.connection !== connection || !connection.isOpen) return toSendResult(failure);
      }
    }
  }

  async sendNotice(chatId: string, text: string): Promise<boolean> {
    const destination = destinationOf(chatId);
    const connection = this.connection;
    if (!destination || !connection?.isOpen) return false;
    try {
      await connection.call('send', { ...destination, message: text.slice(0, SIGNAL_MAX_BYTES / 4) }, 30_000);
      return true;
    } catch (error) {
      this.skeleton.logger.warn('signal: a notice could not be sent', { error: classifySendFailure(error).description });
      return false;
    }
  }

  /** "typing…" until the returned function is called: said again every 10 s (Signal's apps drop an indicator that is not renewed), stopped with `stop: true`. */
  typing(target: TypingTarget): () => void {
    const destination = destinationOf(target.chatId);
    if (!destination || !this.canSend()) return () => {};
    const say = (stop: boolean) => {
      this.connection?.call('sendTyping', { ...destination, ...(stop ? { stop: true } : {}) }, 15_000).catch((error: unknown) => {
        this.skeleton.logger.debug('signal: typing not shown', { error: classifySendFailure(error).description });
      });
    };
    return this.typingRepeats.start(() => say(false), this.options.typingIntervalMs ?? 10_000, () => say(true));
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
