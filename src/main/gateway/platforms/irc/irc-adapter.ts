import type { IrcMessageEvent } from 'irc-framework';
import type { AdapterEvent, AdapterState, MessageLimits, PlatformAdapter, SendResult, SendTarget } from '../adapter';
import { Allowlist, type AccountFact } from './allowlist';
import type { IrcConfig } from './config-schema';
import { IrcConnection, unsafeSetting, type CloseReason } from './connection';
import { loadIrcFramework, type IrcLibrary } from './load-irc-framework';
import { CourtesyBudget, DEFAULT_COURTESY, type CourtesyLimits } from './courtesy-budget';
import { decideInbound } from './inbound';
import { markdownToIrcText } from '../../format/irc-text';
import { textBudget, toProtocolLines } from './lines';
import { MessageRefs } from './message-ref';
import { DEFAULT_PACING, Pacer, type PacingOptions } from './pacer';
import { ReconnectTimer } from '../skeleton/reconnect-timer';
import { ircIntake } from './intake';
import { PairingTeller, type OwedCodes } from '../../access/pairing-teller';
import { AdapterSkeleton, type SkeletonOptions } from '../skeleton/skeleton';

export interface IrcAdapterOptions extends SkeletonOptions {
  readonly config: IrcConfig;
  /** Outgoing line pacing (default: a burst of 4, then one line per 400 ms). */
  readonly pacing?: PacingOptions;
  /** How long `probe()` waits for a PONG before it drops the connection (default 5 s). */
  readonly probeTimeoutMs?: number;
  /** How long `send` waits for the server to confirm a chunk's lines (default 15 s). */
  readonly ackTimeoutMs?: number;
  /** How long registration may take before the attempt is abandoned (default 30 s). */
  readonly registerTimeoutMs?: number;
  /** Bytes per chunk the pipeline should hand to `send` (default 4000). */
  readonly chunkBytes?: number;
  /** The notice a sender who is not on the allowlist gets, once per connection. */
  readonly refusalText?: string;
  /** Told about each refusal notice sent (for the UI and for tests). */
  readonly onRefused?: (nick: string) => void;
  /** How many CTCP answers and refusal notices strangers can draw (default: one per sender a minute, ten a minute in all). */
  readonly courtesy?: CourtesyLimits;
  /** How long a WHOIS for a sender's account may take before the sender is refused (default 10 s). */
  readonly whoisTimeoutMs?: number;
  /** Pairing of new senders (config `pairing: true`); keys are case-folded nicks. */
  readonly access?: OwedCodes & {
    isApproved(senderId: string): boolean;
    requestPairing(sender: { readonly id: string; readonly chatId: string; readonly name: string | undefined }): { readonly code: string } | undefined;
  };
}

/** WHOIS questions open at once; a crowd of strangers beyond it is refused without asking. */
const MAX_OPEN_WHOIS = 5;

export const DEFAULT_REFUSAL = 'Sorry, this assistant only answers its owner.';

const PAIRING_REPLY = (code: string) => `This assistant answers people its owner approved. Your pairing code: ${code} (the owner approves it with: homing pairing approve ${code})`;

/**
 * IRC through irc-framework: joins the configured channels, turns lines addressed to
 * it (and all direct messages) into inbound messages, and sends replies as paced
 * PRIVMSG lines that fit the 512-byte line limit after the server adds our prefix.
 *
 * IRC has no message ids and no server-side deduplication (`idempotentSends: false`).
 * A send counts as done when the server has processed every line: a PING after the
 * last line comes back as PONG, and no 401/403/404 for the target came before it.
 */
export class IrcAdapter implements PlatformAdapter {
  readonly platform = 'irc';
  readonly limits: MessageLimits;
  readonly intake = ircIntake;
  readonly idempotentSends = false;

  /** Logger, clock, state and events, message hand-on, reconnect backoff: what every adapter holds (skeleton/). */
  private readonly skeleton: AdapterSkeleton;
  private readonly config: IrcConfig;
  private readonly pacer: Pacer;
  private readonly refs: MessageRefs;
  private running = false;
  private connection: IrcConnection | undefined;
  /** irc-framework, once the first connect loaded it: every attempt after uses it. */
  private irc: IrcLibrary | undefined;
  /** Bumped by every connect and disconnect: a connect that finds it moved while irc-framework loaded stops. */
  private connects = 0;
  /** The connection once registered: the only one `send` uses. */
  private live: IrcConnection | undefined;
  private refusedThisConnection = new Set<string>();
  private readonly allowlist: Allowlist;
  private readonly courtesy: CourtesyBudget;
  /** Tells owed pairing codes within the courtesy budget, and marks them told once sent. */
  private readonly pairingTeller: PairingTeller;
  /** Per sender, the message decision in progress: a sender's messages pass on in the order they came. */
  private inboundChains = new Map<string, Promise<void>>();
  private openWhois = 0;
  private readonly reconnect = new ReconnectTimer();
  private registerTimer: ReturnType<typeof setTimeout> | undefined;
  private reconnectImmediately = false;
  private sendQueue: Promise<unknown> = Promise.resolve();
  private sendSeq = 0;

  constructor(private readonly options: IrcAdapterOptions) {
    this.config = options.config;
    this.skeleton = new AdapterSkeleton('irc', options, false);
    // The connection logs what goes wrong itself: a state change's error is not logged again.
    this.pacer = new Pacer(options.pacing ?? DEFAULT_PACING, this.skeleton.clock);
    this.refs = new MessageRefs(this.skeleton.clock.now());
    this.limits = { maxLength: options.chunkBytes ?? 4000, unit: 'bytes' };
    this.allowlist = new Allowlist(this.config.allow, this.config.requireAccount);
    this.courtesy = new CourtesyBudget(options.courtesy ?? DEFAULT_COURTESY, () => this.skeleton.clock.monotonic());
    this.pairingTeller = new PairingTeller(
      {
        platform: 'irc',
        access: this.config.pairing ? options.access : undefined,
        budget: { take: () => this.courtesy.takeShared(), waitMs: () => this.courtesy.sharedWaitMs() },
        tell: (owed) => this.sendNotice(owed.chatId, PAIRING_REPLY(owed.code)),
        connected: () => this.live?.nick !== undefined,
        logger: this.skeleton.logger,
      },
      () => this.skeleton.clock.monotonic(),
    );
  }

  /**
   * Whether a send to `target` can go out now: registered, and for a channel,
   * joined. A `degraded` connection (one channel refused) still reaches the
   * channels it is in and every nick; a channel it is not in waits (or is
   * retried after the next reconnect) instead of failing.
   */
  canSend(target: Pick<SendTarget, 'chatId' | 'threadId'>): boolean {
    const connection = this.live;
    if (!connection?.nick) return false;
    return connection.isChannel(target.chatId) ? connection.inChannel(target.chatId) : true;
  }

  state(): AdapterState {
    return this.skeleton.status.state;
  }

  /** The nick we hold now (another one when ours was taken), or undefined when not connected. */
  currentNick(): string | undefined {
    return this.live?.nick;
  }

  onEvent(listener: (event: AdapterEvent) => void): () => void {
    return this.skeleton.status.listen(listener);
  }

  async connect(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.skeleton.backoff.reset();
    const generation = ++this.connects;
    try {
      this.irc ??= await loadIrcFramework();
    } catch (error) {
      if (generation !== this.connects) return;
      this.running = false;
      this.setState('disconnected', `cannot load irc-framework (a broken install?): ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    // Disconnected (and perhaps connected again) while it loaded: that call goes on, not this one.
    if (generation !== this.connects) return;
    this.attempt();
  }

  async disconnect(): Promise<void> {
    this.running = false;
    this.connects++;
    this.clearTimers();
    const connection = this.connection;
    this.connection = undefined;
    this.live = undefined;
    if (connection?.open) {
      connection.quit('Homing is going offline');
      let timer: ReturnType<typeof setTimeout> | undefined;
      const gaveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, 2_000)));
      await Promise.race([connection.whenClosed, gaveUp]);
      clearTimeout(timer);
      connection.destroy();
    }
    this.setState('disconnected');
  }

  async probe(): Promise<void> {
    if (!this.running) return;
    const live = this.live;
    if (!live) {
      // Waiting out a backoff that began before the sleep: the network may be back now.
      this.reconnect.hurry();
      return;
    }
    const answer = await live.ping(this.options.probeTimeoutMs ?? 5_000);
    if (answer === 'timeout' && live === this.live) {
      this.skeleton.logger.warn('irc: no PONG after resume, reconnecting');
      this.reconnectImmediately = true;
      live.destroy();
      // Resolve once the adapter has seen the drop, so the caller sees the new state.
      await live.whenClosed;
    }
  }

  send(text: string, target: SendTarget): Promise<SendResult> {
    // One send at a time, so the lines of two chunks never interleave.
    const result = this.sendQueue.then(() => this.sendNow(text, target));
    this.sendQueue = result.catch(() => undefined);
    return result.catch((error: unknown) => failure(true, `irc send failed: ${String(error)}`));
  }

  private async sendNow(text: string, target: SendTarget): Promise<SendResult> {
    const chatId = target.chatId;
    if (!/^[^\s,:\0][^\s,\0]*$/.test(chatId) || Buffer.byteLength(chatId) > 200) {
      return failure(false, `not an IRC nick or channel: ${JSON.stringify(chatId)}`);
    }
    const connection = this.live;
    // Nothing went out: the resend needs no "may be a repeat" marker.
    if (!connection?.nick) return failure(true, 'not connected to the IRC server', { notDelivered: true });
    // The agent writes Markdown; IRC shows plain text with bold and italic codes (format/irc-text.ts).
    const lines = toProtocolLines(markdownToIrcText(text), textBudget(connection.nick, chatId));
    if (lines.length === 0) return failure(false, 'nothing to send: the text is blank');

    const watch = connection.watchTarget(chatId);
    for (const [index, line] of lines.entries()) {
      await this.pacer.take();
      if (this.live !== connection) {
        watch.stop();
        return failure(true, `connection lost after ${index} of ${lines.length} lines`, index === 0 ? { notDelivered: true } : {});
      }
      connection.write(`PRIVMSG ${chatId} :${line}`);
    }
    const ack = await connection.ping(this.options.ackTimeoutMs ?? 15_000);
    const error = watch.stop();
    if (error) {
      // A person who is offline (401 to a nick) may be back soon: a personal
      // gateway keeps their reply and retries. A channel that is gone or closed
      // to us will not come back by waiting.
      if (!connection.isChannel(chatId) && error.startsWith('401')) {
        return failure(true, `${chatId} is not online: ${error}`, { notDelivered: true, retryAfterMs: OFFLINE_RETRY_MS });
      }
      return failure(false, `the server cannot deliver to ${chatId}: ${error}`, { notDelivered: true });
    }
    if (ack !== 'pong') return failure(true, `the server did not confirm the message (${ack})`);
    // Synthetic: IRC gives sent lines no id. Unique per adapter instance, for logs and the ledger.
    return { ok: true, platformMessageId: `irc:${this.refs.instance}:${++this.sendSeq}` };
  }

  private attempt(): void {
    if (!this.running) return;
    const unsafe = unsafeSetting(this.config);
    if (unsafe !== undefined) {
      // The schema refuses these; a password from the secret store or the environment does not pass through it.
      this.running = false;
      this.setState('auth-failed', `the IRC setting "${unsafe}" contains a control character; it was not sent`);
      return;
    }
    this.setState('connecting');
    this.refusedThisConnection = new Set();
    this.inboundChains = new Map();
    const connection: IrcConnection = new IrcConnection(
      this.irc!,
      this.config,
      {
        registered: (nick) => this.onRegistered(connection, nick),
        joinFailed: (channel, reason) => {
          if (connection !== this.live) return;
          this.skeleton.logger.warn('irc: cannot join channel', { channel, reason });
          this.setState('degraded', `cannot join ${channel}: ${reason}`);
        },
        // Replies owed to this channel can go now: tell the delivery side without waiting for its timer.
        joined: () => {
          if (connection === this.live) this.skeleton.status.emit({ type: 'reachable' });
        },
        message: (kind, event) => this.onMessage(connection, kind, event),
        ctcpRequest: (nick, type) => this.onCtcp(connection, nick, type),
        closed: (reason) => this.onClosed(connection, reason),
      },
      this.skeleton.logger,
    );
    this.connection = connection;
    this.registerTimer = setTimeout(() => {
      if (connection === this.connection && !connection.nick) {
        this.skeleton.logger.warn('irc: registration timed out');
        connection.destroy();
      }
    }, this.options.registerTimeoutMs ?? 30_000);
    connection.start();
  }

  private onRegistered(connection: IrcConnection, nick: string): void {
    if (connection !== this.connection) return;
    clearTimeout(this.registerTimer);
    this.skeleton.backoff.reset();
    this.live = connection;
    if (nick !== this.config.nick) this.skeleton.logger.warn('irc: connected under another nick', { nick, wanted: this.config.nick });
    this.setState('connected');
  }

  private onMessage(connection: IrcConnection, kind: 'privmsg' | 'action', event: IrcMessageEvent): void {
    if (connection !== this.live || !connection.nick) return;
    const own = connection.nick;
    const decision = decideInbound(kind, event, {
      ownNicks: own === this.config.nick ? [own] : [own, this.config.nick],
      isChannel: (target) => connection.isChannel(target),
      isSelf: (nick) => connection.caseLower(nick) === connection.caseLower(own),
      // Asked only for lines addressed to us, so channel chatter costs nothing.
      isAllowed: (nick, message) =>
        this.paired(connection, nick) ? 'allowed' : this.allowlist.decide(nick, connection.knownAccount(nick, message.account), (text) => connection.caseLower(text)),
      messageRef: (message, chatId) => this.refs.next(message, chatId),
    });
    if (decision.kind === 'ignore') return;
    const key = connection.caseLower(event.nick);
    // Chained per sender even when decided at once, so a message never overtakes
    // an earlier one from the same person that is waiting for its WHOIS.
    const previous = this.inboundChains.get(key) ?? Promise.resolve();
    const next = previous.then(async () => {
      switch (decision.kind) {
        case 'refuse':
          void this.refuse(connection, decision.nick);
          return;
        case 'message':
          if (connection === this.live) this.skeleton.status.emit({ type: 'message', message: decision.message });
          return;
        case 'ask-account': {
          const account = await this.lookUpAccount(connection, decision.nick);
          if (connection !== this.live) return;
          if (this.allowlist.decide(decision.nick, account ?? null, (text) => connection.caseLower(text)) === 'allowed') {
            this.skeleton.status.emit({ type: 'message', message: decision.message });
          } else {
            void this.refuse(connection, decision.nick);
          }
          return;
        }
      }
    });
    this.inboundChains.set(key, next);
    void next.finally(() => {
      if (this.inboundChains.get(key) === next) this.inboundChains.delete(key);
    });
  }

  /** The sender's account by WHOIS, paced and capped: undefined (refused) when it cannot be asked or no answer came. */
  private async lookUpAccount(connection: IrcConnection, nick: string): Promise<AccountFact> {
    if (this.openWhois >= MAX_OPEN_WHOIS) {
      this.skeleton.logger.warn('irc: too many account lookups at once, refusing', { nick });
      return undefined;
    }
    this.openWhois += 1;
    try {
      await this.pacer.take();
      if (connection !== this.live) return undefined;
      return await connection.whoisAccount(nick, this.options.whoisTimeoutMs ?? 10_000);
    } finally {
      this.openWhois -= 1;
    }
  }

  /** CTCP VERSION, answered through the pacer and within the courtesy budget; other CTCPs get no answer. */
  private onCtcp(connection: IrcConnection, nick: string, type: string): void {
    if (connection !== this.live || type.toUpperCase() !== 'VERSION') return;
    if (!this.courtesy.take(connection.caseLower(nick))) return;
    void this.pacer.take().then(() => {
      if (this.live === connection) connection.write(`NOTICE ${nick} :\x01VERSION Homing\x01`);
    });
  }

  /** Whether pairing is on and the owner approved this nick. */
  private paired(connection: IrcConnection, nick: string): boolean {
    return this.config.pairing && this.options.access?.isApproved(connection.caseLower(nick)) === true;
  }

  /**
   * At most one refusal per sender per connection, and within the courtesy
   * budget, so neither one stranger nor a crowd of them can make us flood.
   * With pairing on, the refusal is a pairing code (at most once an hour per
   * sender), which the teller sends as the courtesy budget allows.
   */
  private async refuse(connection: IrcConnection, nick: string): Promise<void> {
    const key = connection.caseLower(nick);
    if (this.config.pairing && this.options.access) {
      if (this.options.access.requestPairing({ id: key, chatId: nick, name: nick })) this.pairingTeller.kick();
      return;
    }
    if (this.refusedThisConnection.has(key)) return;
    this.refusedThisConnection.add(key);
    this.skeleton.logger.info('irc: refused a sender not on the allowlist', { nick });
    if (!this.courtesy.take(key)) return;
    await this.pacer.take();
    if (this.live !== connection) return;
    connection.write(`NOTICE ${nick} :${this.options.refusalText ?? DEFAULT_REFUSAL}`);
    this.options.onRefused?.(nick);
  }

  /** A short NOTICE outside the ledger (a pairing code or approval), paced; best effort; true once written to the live connection. */
  async sendNotice(chatId: string, text: string): Promise<boolean> {
    const connection = this.live;
    if (!connection?.nick || !/^[^\s,:\0#&+!][^\s,\0]*$/.test(chatId) || /[\r\n\0]/.test(text)) return false;
    await this.pacer.take();
    if (this.live !== connection) return false;
    connection.write(`NOTICE ${chatId} :${text}`);
    return true;
  }

  private onClosed(connection: IrcConnection, reason: CloseReason): void {
    if (connection !== this.connection) return;
    clearTimeout(this.registerTimer);
    this.connection = undefined;
    this.live = undefined;
    if (!this.running || reason.kind === 'requested') return;
    if (reason.kind === 'auth-failed') {
      // The same credentials will be refused again; wait for a new config (connect()).
      this.running = false;
      this.setState('auth-failed', reason.error);
      return;
    }
    const delay = this.reconnectImmediately ? 0 : this.skeleton.backoff.next();
    this.reconnectImmediately = false;
    // The window shows when the next try is: after a long outage the backoff reaches minutes.
    this.setState('disconnected', reason.error, this.skeleton.clock.now() + delay);
    this.reconnect.schedule(delay, () => this.attempt());
  }

  private clearTimers(): void {
    this.reconnect.cancel();
    clearTimeout(this.registerTimer);
  }

  private setState(state: AdapterState, error?: string, nextAttemptAt?: number): void {
    this.skeleton.status.set(state, error, nextAttemptAt);
  }

}

/** How long to wait before sending again to a nick that was not online. */
const OFFLINE_RETRY_MS = 60_000;

/**
 * IRC failures are either worth retrying (connection, a person offline) or never
 * going to work (channel, text). `notDelivered` when the server surely did not
 * take the text, so a resend carries no marker.
 */
function failure(retryable: boolean, error: string, extra: { notDelivered?: boolean; retryAfterMs?: number } = {}): SendResult {
  return { ok: false, retryable, permanent: !retryable, error, ...extra };
}
