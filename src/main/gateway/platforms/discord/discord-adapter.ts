import type { Client, GatewayDispatchPayload } from 'discord.js';
import type { AdapterEvent, AdapterState, MessageLimits, PlatformAdapter, SendResult, SendTarget, TypingTarget } from '../adapter';
import { boundedRequest } from './bounded-request';
import { ChannelPositions, compareSnowflakes } from './channel-positions';
import type { DiscordConfig, DiscordPlace } from './config-schema';
import { toDiscordText } from './discord-text';
import { loadDiscordJs, routes, type DiscordJs } from './load-discord-js';
import { parseMessageCreate, type IncomingDiscordMessage } from './inbound';
import { openDiscordMedia } from './open-media';
import { MediaFetchError, theMedia, type MediaBody, type MediaOffer } from '../../media/media';
import { nonceFor } from './nonce';
import { classifyFailure, describe, toSendResult } from './send-errors';
import { Admission, type AdmissionDecision } from '../skeleton/admission';
import { ReconnectTimer } from '../skeleton/reconnect-timer';
import { TypingRepeats } from '../skeleton/typing-repeats';
import { usualPairingTeller } from '../../access/pairing-replies';
import type { OwedCodes, PairingTeller } from '../../access/pairing-teller';
import { discordIntake } from './intake';
import { AdapterSkeleton, type SkeletonOptions } from '../skeleton/skeleton';

/** Who may talk to the agent, and the pairing of new senders (access/pairing-store.ts implements it). */
export interface DiscordAccess extends OwedCodes {
  isApproved(senderId: string): boolean;
  requestPairing(sender: { readonly id: string; readonly chatId: string; readonly name: string | undefined }): { readonly code: string } | undefined;
}

export interface DiscordAdapterOptions extends SkeletonOptions {
  readonly config: DiscordConfig;
  readonly token: string;
  /** Where the channel positions are kept. */
  readonly dataDir: string;
  readonly access: DiscordAccess;
  /** Interval between typing calls (Discord shows one for about 10 s; default 8 s). */
  readonly typingIntervalMs?: number;
  /** A 429 longer than this is not waited out inside `send` but handed back to the ledger (default 120 s). */
  readonly maxInlineWaitMs?: number;
  /**
   * How long after a chunk's first send Discord is trusted to deduplicate its
   * nonce (default 2 min: Discord documents "a few minutes"). Older resends carry the marker.
   */
  readonly nonceWindowMs?: number;
}

/** Guilds, their messages, direct messages, and the text of messages (a privileged intent, switched on in the Developer Portal). */
export const DISCORD_INTENTS = { Guilds: 1 << 0, GuildMessages: 1 << 9, DirectMessages: 1 << 12, MessageContent: 1 << 15 } as const;
/** Messages per history read: Discord's most (discord-api-docs, "Get Channel Messages": limit 1-100). */
const PAGE_SIZE = 100;
/** Gateway close codes after which reconnecting cannot help (discord.js stops too). */
const CLOSE_WORDS: Record<number, string> = {
  4004: 'Discord refused the bot token (gateway: authentication failed): copy it again from the Developer Portal → your application → Bot → Reset Token',
  4014: 'Discord refused the intents Homing needs: in the Developer Portal → your application → Bot, switch on "Message Content Intent", then reconnect',
  4013: 'Discord refused the intents Homing asked for (invalid intents)',
  4010: 'Discord refused the shard settings',
  4011: 'Discord asks for sharding, which Homing does not do (the bot is in too many servers)',
  4012: 'Discord refused the gateway version',
};

/**
 * Discord through discord.js 14: the Gateway for incoming messages, REST for
 * sends (REST and so the Gateway URL, which `/gateway/bot` names, follow
 * `apiUrl`).
 *
 * Durable intake: messages are taken one at a time, in the order the Gateway
 * dispatches them; a channel's position (channel-positions.ts) moves past a
 * message only once the pipeline says it is saved. After every (re)connect
 * the adapter reads, in every channel it answers in (DMs, listed servers,
 * channels and threads: only those have a position), the messages after its
 * position, page by page to the channel's end, so nothing sent while the
 * Gateway was away (or Homing was down) is lost; a failed read is tried again
 * later. The fetched ones are checked against the transcript, since a crash
 * may have come between saving and moving the position. Discord lists no DM
 * channels to a bot (`GET /users/@me/channels` and READY's `private_channels`
 * are empty for bots), so a DM channel the bot never answered in is found only
 * by its next live message, which catches it up from `since`.
 *
 * Sends carry the chunk's idempotency key as `nonce` with `enforce_nonce`:
 * inside Discord's nonce window a resend returns the message already there,
 * so `idempotentSends` holds for `dedupWindowMs`; an older resend gets the marker.
 */
export class DiscordAdapter implements PlatformAdapter {
  readonly platform = 'discord';
  readonly limits: MessageLimits = { maxLength: 2000, unit: 'utf16' };
  readonly intake = discordIntake;
  readonly idempotentSends = true;
  readonly dedupWindowMs: number;

  /** Logger, clock, state and events, message hand-on, reconnect backoff: what every adapter holds (skeleton/). */
  private readonly skeleton: AdapterSkeleton;
  private readonly config: DiscordConfig;
  private readonly admission: Admission;
  private running = false;
  /** Bumped by every connect/disconnect: work of an older generation stops. */
  private generation = 0;
  private client: Client | undefined;
  private botId: string | undefined;
  private botName: string | undefined;
  private positions: ChannelPositions | undefined;
  /** Incoming work (dispatches, catch-ups), one at a time, in order. */
  private intakeLine: Promise<void> = Promise.resolve();
  /** A message could not be saved now: later dispatches wait for the next catch-up, which starts from the position. */
  private stalled = false;
  /** Channels whose catch-up has not reached their end yet. */
  private readonly behind = new Set<string>();
  /** The next attempt at the channels a failed read left behind. */
  private catchUpRetry: ReturnType<typeof setTimeout> | undefined;
  private catchUpFailures = 0;
  private readonly reconnect = new ReconnectTimer();
  private readonly typingRepeats = new TypingRepeats();
  /** Tells owed pairing codes, at most 20 per 10 minutes, and marks them told once sent. */
  private readonly pairingTeller: PairingTeller;
  private readonly redactor: (text: string) => string;

  constructor(private readonly options: DiscordAdapterOptions) {
    this.config = options.config;
    this.skeleton = new AdapterSkeleton('discord', options);
    this.admission = new Admission(this.config, options.access);
    this.pairingTeller = usualPairingTeller({
      platform: 'discord',
      access: options.access,
      sendNotice: (chatId, text) => this.sendNotice(chatId, text),
      connected: () => this.canSend(),
      logger: this.skeleton.logger,
      now: () => this.skeleton.clock.monotonic(),
    });
    this.dedupWindowMs = options.nonceWindowMs ?? 120_000;
    const token = options.token;
    this.redactor = (text) => (token === '' ? text : text.split(token).join('[token]'));
  }

  state(): AdapterState {
    return this.skeleton.status.state;
  }

  /** The bot's name once connected. */
  identity(): { readonly id: string; readonly name: string } | undefined {
    return this.botId && this.botName ? { id: this.botId, name: this.botName } : undefined;
  }

  onEvent(listener: (event: AdapterEvent) => void): () => void {
    return this.skeleton.status.listen(listener);
  }

  canSend(): boolean {
    return this.client !== undefined && this.skeleton.status.up;
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
    this.typingRepeats.stopAll();
    const client = this.client;
    this.client = undefined;
    if (client) await client.destroy().catch(() => undefined);
    this.setState('disconnected');
  }

  /** After a sleep the Gateway socket may be dead: start a fresh connection (it resumes when Discord still has the session). */
  async probe(): Promise<void> {
    if (!this.running) return;
    if (this.reconnect.hurry()) return;
    // discord.js notices a dead socket by a missing heartbeat ACK and resumes by itself.
  }

  // ---- connection ------------------------------------------------------

  private start(generation: number): void {
    void this.login(generation).catch((error: unknown) => {
      this.skeleton.logger.error('discord: the connection failed unexpectedly', { error: this.redactor(describe(error)) });
      this.retryLater(generation, `an unexpected error: ${this.redactor(describe(error))}`);
    });
  }

  private async login(generation: number): Promise<void> {
    const alive = () => this.running && generation === this.generation;
    this.setState('connecting');
    const client = this.newClient(await loadDiscordJs(), generation);
    if (!alive()) {
      await client.destroy().catch(() => undefined);
      return;
    }
    try {
      await client.login(this.options.token);
    } catch (error) {
      await client.destroy().catch(() => undefined);
      if (!alive()) return;
      const words = this.loginFailure(error);
      if (words.fatal) {
        this.running = false;
        this.setState('auth-failed', words.text);
        return;
      }
      this.retryLater(generation, words.text);
      return;
    }
    if (!alive()) {
      await client.destroy().catch(() => undefined);
      return;
    }
    this.client = client;
  }

  private loginFailure(error: unknown): { fatal: boolean; text: string } {
    const code = (error as { code?: unknown }).code;
    if (code === 'TokenInvalid' || (error as { status?: unknown }).status === 401) {
      return { fatal: true, text: 'Discord refused the bot token: copy it again from the Developer Portal → your application → Bot → Reset Token' };
    }
    if (code === 'DisallowedIntents') return { fatal: true, text: CLOSE_WORDS[4014]! };
    return { fatal: false, text: `cannot reach Discord: ${this.redactor(describe(error))}` };
  }

  private retryLater(generation: number, error: string): void {
    if (!this.running || generation !== this.generation) return;
    const delay = this.skeleton.backoff.next();
    this.skeleton.status.set('disconnected', error, this.skeleton.clock.now() + delay);
    this.reconnect.schedule(delay, () => {
      if (this.running && generation === this.generation) this.start(generation);
    });
  }

  /**
   * discord.js handles each Gateway dispatch inside an event listener, where an
   * exception becomes an unhandled rejection: a broken or hostile Gateway (a
   * dispatch with no data, a guild whose members are null) would take the
   * process down. Each dispatch is checked for the one shape every handler
   * assumes (an object `d`; RESUMED alone has none) and handled under a guard;
   * what fails is logged and skipped.
   */
  private guardPackets(client: Client): void {
    const manager = client.ws as unknown as { handlePacket(packet: unknown, shard: unknown): boolean };
    const handle = manager.handlePacket.bind(manager);
    manager.handlePacket = (packet, shard) => {
      const dispatch = packet as { t?: unknown; d?: unknown } | undefined;
      if (dispatch && typeof dispatch.t === 'string' && dispatch.t !== 'RESUMED' && (typeof dispatch.d !== 'object' || dispatch.d === null)) {
        this.skeleton.logger.warn('discord: skipped a Gateway event without data', { event: dispatch.t.slice(0, 64) });
        return false;
      }
      try {
        return handle(packet, shard);
      } catch (error) {
        this.skeleton.logger.warn('discord: skipped a Gateway event discord.js could not handle', { event: String(dispatch?.t).slice(0, 64), error: describe(error) });
        return false;
      }
    };
  }

  private newClient(djs: DiscordJs, generation: number): Client {
    const { Client, Events, Options, Partials } = djs;
    const client = new Client({
      intents: Object.values(DISCORD_INTENTS).reduce((all, bit) => all | bit, 0),
      partials: [Partials.Channel],
      // Homing reads messages from the raw dispatches: the client keeps no messages of its own.
      makeCache: Options.cacheWithLimits({ ...Options.DefaultMakeCacheSettings, MessageManager: 0, GuildMemberManager: 0, UserManager: 100, PresenceManager: 0, ReactionManager: 0 }),
      rest: {
        api: this.config.apiUrl,
        makeRequest: boundedRequest(djs.DefaultRestOptions.makeRequest),
        timeout: 30_000,
        rejectOnRateLimit: (limit) => limit.retryAfter > (this.options.maxInlineWaitMs ?? 120_000),
      },
      // Nothing in an agent's text may ping anyone (toDiscordText and each send say it again).
      allowedMentions: { parse: [] },
    });
    this.guardPackets(client);
    const alive = () => this.running && generation === this.generation;
    client.on(Events.Raw, (packet: GatewayDispatchPayload) => {
      if (alive()) this.onDispatch(client, generation, packet);
    });
    client.on(Events.ShardReconnecting, () => {
      if (alive() && this.client === client) this.setState('connecting', 'the Discord Gateway connection dropped; reconnecting');
    });
    client.on(Events.ShardDisconnect, (event) => {
      if (!alive()) return;
      const words = CLOSE_WORDS[event.code] ?? `Discord closed the Gateway connection (${event.code})`;
      this.client = undefined;
      void client.destroy().catch(() => undefined);
      if (event.code === 4004) {
        this.running = false;
        this.setState('auth-failed', words);
      } else if (event.code in CLOSE_WORDS) {
        this.running = false;
        this.setState('disconnected', words);
      } else {
        this.retryLater(generation, words);
      }
    });
    client.on(Events.ShardError, (error) => this.skeleton.logger.warn('discord: Gateway error', { error: this.redactor(describe(error)) }));
    client.on(Events.Error, (error) => this.skeleton.logger.warn('discord: client error', { error: this.redactor(describe(error)) }));
    client.rest.on('rateLimited', (info) => this.skeleton.logger.info('discord: rate limited; waiting', { route: info.route, retryAfterMs: info.retryAfter, global: info.global }));
    return client;
  }

  // ---- receiving -------------------------------------------------------

  private onDispatch(client: Client, generation: number, packet: GatewayDispatchPayload): void {
    switch (packet.t) {
      case 'READY': {
        const user = packet.d.user;
        this.botId = user.id;
        this.botName = user.global_name ?? user.username;
        try {
          this.positions ??= ChannelPositions.forBot(this.options.dataDir, user.id, this.skeleton.logger);
        } catch (error) {
          this.running = false;
          this.client = undefined;
          void client.destroy().catch(() => undefined);
          this.setState('disconnected', `cannot keep Discord's channel positions in the data directory: ${describe(error)}`);
          return;
        }
        this.skeleton.backoff.reset();
        this.client = client;
        this.skeleton.logger.info('discord: connected', { bot: this.botName });
        this.setState('connected');
        this.enqueue(generation, () => this.catchUp(client, generation));
        return;
      }
      case 'RESUMED':
        this.client = client;
        this.setState('connected');
        // Discord replays what the session missed; a catch-up also covers what it could not keep.
        this.enqueue(generation, () => this.catchUp(client, generation));
        return;
      case 'MESSAGE_CREATE':
        this.enqueue(generation, () => this.takeRaw(client, packet.d, false));
        return;
      default:
        return;
    }
  }

  private enqueue(generation: number, task: () => Promise<void>): void {
    this.intakeLine = this.intakeLine
      .then(async () => {
        if (this.running && generation === this.generation) await task();
      })
      .catch((error: unknown) => this.skeleton.logger.error('discord: taking a message failed', { error: this.redactor(describe(error)) }));
  }

  /**
   * Fetches, per channel the bot answers in, every message after its position,
   * oldest first, and takes them; `only` limits it to the channels a failed
   * read left behind.
   */
  private async catchUp(client: Client, generation: number, only?: readonly string[]): Promise<void> {
    const positions = this.positions;
    if (!positions) return;
    this.stalled = false;
    const alive = () => this.running && generation === this.generation;
    // Channels answered in before, the channels listed to answer in (from `since` if never written in),
    // and any a failed read left behind: all of them.
    if (only === undefined) this.cancelCatchUpRetry();
    const channels = only ?? [...new Set([...positions.known(), ...Object.keys(this.config.channels), ...this.behind])];
    for (const channelId of channels) {
      if (!alive() || this.stalled) return;
      await this.catchUpChannel(client, channelId, alive);
    }
  }

  /**
   * The messages of one channel after its position, oldest first, taken one by
   * one, page after page until the channel's end. Until that end is reached the
   * channel is `behind`: its live messages are left to this catch-up (they are
   * in the history it reads), so no live message moves its position past
   * messages not read yet.
   */
  private async catchUpChannel(client: Client, channelId: string, alive: () => boolean): Promise<void> {
    const positions = this.positions!;
    this.behind.add(channelId);
    while (alive() && !this.stalled) {
      const page = await this.readPage(client, channelId);
      if (page.kind === 'failed') return this.retryCatchUp(channelId, page.retryAfterMs);
      if (page.kind === 'gone') {
        this.behind.delete(channelId);
        positions.forget(channelId);
        return;
      }
      for (const item of page.messages) {
        if (!alive() || this.stalled) return;
        // A message fetched from a channel belongs to it, whatever the payload says.
        await this.takeRaw(client, { ...item, channel_id: channelId }, true);
      }
      if (!alive() || this.stalled) return;
      const newest = page.messages.at(-1);
      // Every message of the page is saved or needs nothing: the position moves past the page.
      if (newest) positions.advance(channelId, newest.id);
      if (page.complete || !newest) break;
    }
    if (alive() && !this.stalled) {
      this.behind.delete(channelId);
      this.catchUpFailures = 0;
    }
  }

  /**
   * One page of a channel's history after its position: Discord returns the
   * `limit` (at most 100) messages right after `after`, newest first
   * (discord-api-docs, resources/message.mdx "Get Channel Messages"; discord.py's
   * `history(after=)` pages on the first item), so a full page may have more after it.
   */
  private async readPage(
    client: Client,
    channelId: string,
  ): Promise<{ kind: 'page'; messages: { id: string }[]; complete: boolean } | { kind: 'failed'; retryAfterMs: number | undefined } | { kind: 'gone' }> {
    const after = this.positions!.last(channelId);
    let batch: unknown;
    try {
      batch = await client.rest.get(routes.channelMessages(channelId), { query: new URLSearchParams({ after, limit: String(PAGE_SIZE) }) });
    } catch (error) {
      const failure = classifyFailure(error, this.redactor);
      if (failure.kind === 'permanent') {
        this.skeleton.logger.warn('discord: cannot read a channel any more; not catching it up', { channel: channelId, error: failure.description });
        return { kind: 'gone' };
      }
      this.skeleton.logger.warn('discord: could not fetch the messages missed in a channel; trying again', { channel: channelId, error: failure.description });
      return { kind: 'failed', retryAfterMs: failure.kind === 'rate-limited' ? failure.retryAfterMs : undefined };
    }
    if (!Array.isArray(batch)) return { kind: 'failed', retryAfterMs: undefined };
    const messages = batch
      .filter((item): item is { id: string } => typeof item === 'object' && item !== null && typeof (item as { id?: unknown }).id === 'string' && /^\d{1,20}$/.test((item as { id: string }).id))
      .filter((item) => compareSnowflakes(item.id, after) > 0)
      .sort((a, b) => compareSnowflakes(a.id, b.id));
    return { kind: 'page', messages, complete: batch.length < PAGE_SIZE };
  }

  /**
   * A read failed (a 5xx after discord.js's own retries, a network error): the
   * channels left behind are read again later, from their positions, by
   * whichever client is connected then.
   */
  private retryCatchUp(channelId: string, retryAfterMs: number | undefined): void {
    if (this.catchUpRetry) return;
    const generation = this.generation;
    const delay = retryAfterMs ?? Math.min(60_000, 1_000 * 2 ** Math.min(6, this.catchUpFailures++));
    this.skeleton.logger.info('discord: catching up again later', { channel: channelId, inMs: delay });
    this.catchUpRetry = setTimeout(() => {
      this.catchUpRetry = undefined;
      const client = this.client;
      // Without a client, the next READY catches up every channel, these included.
      if (client) this.enqueue(generation, () => this.catchUp(client, generation, [...this.behind]));
    }, delay);
    this.catchUpRetry.unref?.();
  }

  /** One message, from the Gateway or a catch-up; resolves once it is saved or known to need nothing. */
  private async takeRaw(client: Client, raw: unknown, fetched: boolean): Promise<void> {
    const positions = this.positions;
    const botId = this.botId;
    if (!positions || !botId || this.stalled) return;
    const parsed = parseMessageCreate(raw, botId, this.config.apiUrl);
    if (parsed.kind === 'ignore') {
      if (!fetched && parsed.id && parsed.channelId) this.passOver(parsed.channelId, parsed.id);
      return;
    }
    const message = parsed.message;
    if (positions.seen(message.channelId, message.id)) return;
    // Its channel's catch-up has not reached it yet: that catch-up takes it, in its turn.
    if (!fetched && this.behind.has(message.channelId)) return;
    const place = message.guildId === undefined ? undefined : await this.placeOf(client, message);
    if (!fetched && !positions.has(message.channelId)) {
      // Only a channel the bot answers in gets a position (a busy server it ignores would crowd them out).
      if (!this.answersIn(message, place)) return;
      // A channel never answered in before (a DM opened while Homing was down, say): what was
      // written there since Homing started listening comes first, this message with it.
      const generation = this.generation;
      await this.catchUpChannel(client, message.channelId, () => this.running && generation === this.generation);
      // Taken by that catch-up, or left to its retry; else (the bot may not read the history) taken here.
      if (positions.seen(message.channelId, message.id) || this.stalled || this.behind.has(message.channelId)) return;
    }
    const decision = this.admit(message, place);
    if (decision === 'pair') {
      const request = this.options.access.requestPairing({ id: message.senderId, chatId: message.channelId, name: message.senderName });
      if (request) this.pairingTeller.kick();
    }
    if (decision !== 'agent') {
      if (!fetched) this.passOver(message.channelId, message.id);
      return;
    }
    // A channel seen for the first time is remembered from just before this message, so a crash
    // before its position moves still has the next start fetch this message and what follows.
    if (!positions.has(message.channelId)) positions.advance(message.channelId, (BigInt(message.id) - 1n).toString());
    const thread = place?.parentId !== undefined;
    const outcome = await this.skeleton.handOn.handOn({
      source: {
        platform: 'discord',
        chatId: thread ? place!.parentId! : message.channelId,
        chatType: message.guildId === undefined ? 'direct' : thread ? 'thread' : 'channel',
        senderId: message.senderId,
        ...(thread ? { threadId: message.channelId } : {}),
        ...(place?.name !== undefined ? { chatName: place.name } : {}),
        ...(message.senderName !== undefined ? { senderName: message.senderName } : {}),
        messageId: message.id,
      },
      text: message.text,
      ...(message.media.length > 0 ? { media: message.media } : {}),
      messageRef: `dc:${message.channelId}:${message.id}`,
      replyTo: message.id,
      ...(fetched ? { maybeSeen: true } : {}),
    });
    if (outcome === 'not-now') {
      // Not saved (the gateway is stopping, the disk failed): nothing after it in any channel is
      // taken until a catch-up starts again from the positions.
      this.stalled = true;
      const generation = this.generation;
      setTimeout(() => this.enqueue(generation, () => this.catchUp(client, generation)), 1_000).unref?.();
      return;
    }
    positions.advance(message.channelId, message.id);
  }

  private cancelCatchUpRetry(): void {
    clearTimeout(this.catchUpRetry);
    this.catchUpRetry = undefined;
  }

  /**
   * A live message that needs nothing: the position moves past it where the
   * channel has one (a catch-up moves it past whole pages; a channel without a
   * position is not one the bot answers in).
   */
  private passOver(channelId: string, messageId: string): void {
    if (this.positions?.has(channelId) && !this.behind.has(channelId)) this.positions.advance(channelId, messageId);
  }

  /** Whether the bot answers in this message's channel at all (a DM it may answer, a listed server, channel or thread). */
  private answersIn(message: IncomingDiscordMessage, place: { parentId: string | undefined } | undefined): boolean {
    if (message.guildId === undefined) return this.config.dmPolicy !== 'allowlist' || this.config.allowFrom.includes(message.senderId);
    return this.placeEntry(message, place) !== undefined;
  }

  /** The channel a guild message is in: its name, and for a thread its parent channel. */
  private async placeOf(client: Client, message: IncomingDiscordMessage): Promise<{ name: string | undefined; parentId: string | undefined }> {
    let channel = client.channels.cache.get(message.channelId);
    if (!channel) channel = (await client.channels.fetch(message.channelId).catch(() => null)) ?? undefined;
    if (!channel) return { name: undefined, parentId: undefined };
    const name = 'name' in channel && typeof channel.name === 'string' ? channel.name : undefined;
    return { name, parentId: channel.isThread() ? (channel.parentId ?? undefined) : undefined };
  }

  /** Whether a message goes to the agent, gets a pairing code, or is ignored. */
  private admit(message: IncomingDiscordMessage, place: { parentId: string | undefined } | undefined): AdmissionDecision {
    if (message.fromBot) return 'ignore';
    if (message.guildId === undefined) return this.admission.direct(message.senderId);
    return this.admission.inPlace(message.senderId, this.placeEntry(message, place), () => message.addressed);
  }

  /** The settings of the channel (or its thread's parent, or its server) the bot answers in, if any. */
  private placeEntry(message: IncomingDiscordMessage, place: { parentId: string | undefined } | undefined): DiscordPlace | undefined {
    if (message.guildId === undefined) return undefined;
    return this.config.channels[message.channelId] ?? (place?.parentId ? this.config.channels[place.parentId] : undefined) ?? this.config.guilds[message.guildId];
  }

  // ---- sending ---------------------------------------------------------

  async send(text: string, target: SendTarget): Promise<SendResult> {
    const channelId = target.threadId ?? target.chatId;
    if (!/^\d{1,20}$/.test(channelId)) return { ok: false, retryable: false, permanent: true, notDelivered: true, error: `not a Discord channel id: ${JSON.stringify(channelId.slice(0, 40))}` };
    const client = this.client;
    if (!client || !this.canSend()) return { ok: false, retryable: true, permanent: false, notDelivered: true, error: 'not connected to Discord' };
    const replyTo = target.replyTo !== null && /^\d{1,20}$/.test(target.replyTo) ? target.replyTo : undefined;
    try {
      const sent = (await client.rest.post(routes.channelMessages(channelId), {
        body: {
          content: toDiscordText(text),
          nonce: nonceFor(target.idempotencyKey),
          enforce_nonce: true,
          allowed_mentions: { parse: [], replied_user: true },
          ...(replyTo ? { message_reference: { message_id: replyTo, fail_if_not_exists: false } } : {}),
        },
      })) as { id?: unknown };
      const id = typeof sent?.id === 'string' ? sent.id : 'unknown';
      return { ok: true, platformMessageId: `${channelId}:${id}` };
    } catch (error) {
      const failure = classifyFailure(error, this.redactor);
      if (failure.kind === 'unauthorized') this.setState('auth-failed', `Discord refused the bot token (${failure.description})`);
      return toSendResult(failure);
    }
  }

  /** A short plain message outside the ledger (a pairing code, an approval): best effort, never retried; true once it went out. */
  async sendNotice(chatId: string, text: string): Promise<boolean> {
    if (!/^\d{1,20}$/.test(chatId) || !this.client) return false;
    try {
      await this.client.rest.post(routes.channelMessages(chatId), { body: { content: toDiscordText(text).slice(0, 2000), allowed_mentions: { parse: [] } } });
      return true;
    } catch (error) {
      this.skeleton.logger.warn('discord: a notice could not be sent', { error: classifyFailure(error, this.redactor).description });
      return false;
    }
  }

  /** Shows "typing…" in the channel until the returned function is called (Discord shows it for about 10 s, so it is repeated). */
  typing(target: TypingTarget): () => void {
    const channelId = target.threadId ?? target.chatId;
    if (!/^\d{1,20}$/.test(channelId) || !this.canSend()) return () => {};
    const tick = () => {
      this.client?.rest.post(routes.channelTyping(channelId)).catch((error: unknown) => {
        this.skeleton.logger.debug('discord: typing not shown', { error: classifyFailure(error, this.redactor).description });
      });
    };
    return this.typingRepeats.start(tick, this.options.typingIntervalMs ?? 8_000);
  }

  // ---- files -----------------------------------------------------------

  /**
   * Fetches a file a message offered (open-media.ts): its signed CDN link as it
   * came, or, once that expired, the link of the message fetched again (which
   * needs the connection; without one the fetch is tried again later).
   */
  readonly openMedia = (offer: Pick<MediaOffer, 'kind' | 'source' | 'mime' | 'name'>, options: { readonly signal: AbortSignal; readonly maxBytes: number }): Promise<MediaBody> =>
    openDiscordMedia(offer, options, {
      apiUrl: this.config.apiUrl,
      now: () => this.skeleton.clock.now(),
      refetch: (channelId, messageId, signal) => this.refetchMessage(channelId, messageId, signal, theMedia(offer.kind)),
    });

  /** Get Channel Message (discord-api-docs resources/message.mdx), for the fresh links of its attachments. */
  private async refetchMessage(channelId: string, messageId: string, signal: AbortSignal, what: string): Promise<unknown> {
    const client = this.client;
    if (!client) throw new MediaFetchError(`the link to ${what} expired, and Homing is not connected to Discord to renew it`, false);
    try {
      return await client.rest.get(routes.channelMessage(channelId, messageId), { signal });
    } catch (error) {
      const failure = classifyFailure(error, this.redactor);
      // 404 (10008 unknown message, 10003 unknown channel), 403 (no access to the channel any more): it will not come back.
      if (failure.kind === 'permanent') throw new MediaFetchError(`${what} is no longer on Discord: the link expired and its message cannot be read again (deleted, or out of the bot's reach: ${failure.description})`, true);
      throw new MediaFetchError(`the link to ${what} expired and could not be renewed now (${signal.aborted ? 'stopped' : failure.description})`, false);
    }
  }

  // ---- plumbing --------------------------------------------------------

  private setState(state: AdapterState, error?: string): void {
    this.skeleton.status.set(state, error);
  }

}
