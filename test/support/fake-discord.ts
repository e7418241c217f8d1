import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { DownloadHold } from './download-hold';

/**
 * Discord on 127.0.0.1, written from the facts in PLATFORMS.md (copied to
 * test/fixtures/discord-api.md) and the shapes discord.js 14 reads, so the
 * real client runs against it unchanged. No kinder than the real service:
 *
 * REST (`/api/v10`, `Authorization: Bot <token>`, else `401 {code: 0}`):
 * - `GET /gateway/bot` (the WebSocket URL the client connects to),
 *   `GET /users/@me`, `GET /channels/{id}`;
 * - `POST /channels/{id}/messages`: `content` 1–2000 (counted in UTF-16 units,
 *   the strict reading), `nonce` ≤ 25 characters, `enforce_nonce` (the same
 *   author + nonce inside `nonceWindowMs` returns the existing message and
 *   creates none), `message_reference`, `allowed_mentions` (what pings is
 *   recorded per message: without it, `@everyone`, `@here` and `<@id>` ping);
 *   `403 50013` missing permissions, `403 50007` cannot message this user,
 *   `404 10003` unknown channel, `400 50035` invalid form body;
 * - `GET /channels/{id}/messages?after=&limit=` (the `limit` (1–100, default
 *   50) oldest after `after`, newest first, as Discord returns them), every
 *   channel keeping its whole history; scripted 5xx answers for it
 *   (`failHistoryReads`);
 * - `GET /users/@me/channels`: an empty list for a bot (Discord stopped listing
 *   a bot's DM channels: discord-api-docs change-log.mdx, June 19, 2018), so a
 *   DM channel is known only from a message in it;
 * - `POST /channels/{id}/typing` (`204`);
 * - rate limits per route bucket (`X-RateLimit-Limit/Remaining/Reset/
 *   Reset-After/Bucket` on every answer of a counted route, `X-RateLimit-Scope`
 *   on a 429 only; `429 {retry_after (float s), global}` with `Retry-After`
 *   once a bucket is spent), and scripted 429s, global ones included.
 *
 * Gateway (`/gateway?v=10&encoding=json`): HELLO, IDENTIFY → READY (guilds
 * unavailable, then GUILD_CREATE each), heartbeats and their ACKs, RESUME →
 * the missed dispatches replayed, then RESUMED (or INVALID_SESSION), dispatches
 * filtered by intents (message content empty without MESSAGE_CONTENT unless a
 * DM or a mention), close codes 4004 (authentication failed), 4014 (disallowed
 * intents), 4002/4003/4005/4009. Tests script people (`userSays`), guilds,
 * channels, threads, faults, and read what the bot sent.
 *
 * Files (issue 38): a person's message may carry attachments (`userSays`
 * with `files`; a voice message with IS_VOICE_MESSAGE), each in the payload as
 * docs message.mdx's Attachment Object, its `url` a signed link on this
 * server's CDN route `GET /attachments/{channel}/{attachment}/{filename}?ex=&is=&hm=`
 * (docs reference.mdx, Signed Attachment CDN URLs: `ex`/`is` hex seconds, `hm`
 * a signature); a link expires `linkLifetimeMs` after it was issued (24 h by
 * default: the lifetime is not documented, ~24 h is what merlinfuchs/cdproxy's
 * README reports), and an expired, unsigned or tampered one answers
 * `404 This content is no longer available.` (observed: useapi/discord-cdn-proxy
 * README). Every payload issues fresh links, so `GET /channels/{id}/messages/{id}`
 * (Get Channel Message; `404 10008 Unknown Message`) renews them. The CDN needs
 * no token. Tests move the link clock (`advanceLinkClock`), hold downloads
 * (`holdDownloads`), and read every download (`downloads`).
 *
 * Sources named in the comments below (issue 33): "docs …" is
 * discord/discord-api-docs under `developers/` (checked at c98d64b, Aug 2026):
 * resources/message.mdx, resources/channel.mdx, resources/user.mdx,
 * events/gateway.mdx, events/gateway-events.mdx, topics/rate-limits.mdx,
 * topics/opcodes-and-status-codes.mdx ("status-codes" below), reference.mdx,
 * change-log.mdx. Where Discord documents nothing, an observed answer is cited
 * by its GitHub issue, or the comment says the value is the fake's choice.
 */

/** docs reference.mdx, Snowflakes: "Milliseconds since Discord Epoch, the first second of 2015 or 1420070400000". */
export const DISCORD_EPOCH = 1_420_070_400_000n;
/** The fake's own limit (docs message.mdx, Create Message: "The maximum request size when sending a message is 25 MiB"); the 413 carries 40005 (status-codes, JSON). */
const MAX_BODY = 1024 * 1024;
/** docs message.mdx, Create Message: `content` "up to 2000 characters" (how they are counted is not documented: UTF-16 units here). */
const MAX_CONTENT = 2000;
/** docs message.mdx, Create Message: `nonce` "integer or string … (up to 25 characters)". */
const MAX_NONCE = 25;
/** docs events/gateway.mdx, List of Intents; privileged: "Privileged Intents" (GUILD_PRESENCES, GUILD_MEMBERS, MESSAGE_CONTENT). */
const INTENTS = {
  Guilds: 1 << 0,
  GuildMembers: 1 << 1,
  GuildPresences: 1 << 8,
  GuildMessages: 1 << 9,
  DirectMessages: 1 << 12,
  MessageContent: 1 << 15,
} as const;
const PRIVILEGED = INTENTS.GuildMembers | INTENTS.GuildPresences | INTENTS.MessageContent;

/** docs channel.mdx, Channel Types: GUILD_TEXT 0, DM 1, PUBLIC_THREAD 11. */
export const CHANNEL_TYPES = { GuildText: 0, DM: 1, PublicThread: 11 } as const;

export interface FakeDiscordUser {
  readonly id: string;
  readonly username: string;
  readonly global_name: string | null;
  readonly bot?: boolean;
}

export interface FakeChannel {
  readonly id: string;
  readonly type: number;
  readonly guild_id?: string;
  readonly parent_id?: string;
  readonly name?: string;
  /** DM channels: the other person. */
  readonly recipient?: FakeDiscordUser;
}

export interface FakeMessage {
  readonly id: string;
  readonly channel_id: string;
  readonly guild_id?: string;
  readonly author: FakeDiscordUser;
  readonly content: string;
  readonly nonce?: string | number;
  readonly message_reference?: { readonly message_id: string; readonly channel_id: string; readonly guild_id?: string };
  readonly mentions: readonly FakeDiscordUser[];
  /** When it was created (ms). */
  readonly at: number;
  /** Who was pinged by it (allowed_mentions applied). */
  readonly pinged: { readonly everyone: boolean; readonly users: readonly string[]; readonly roles: readonly string[] };
  readonly attachments?: readonly FakeAttachment[];
  /** docs message.mdx, Message Flags (IS_VOICE_MESSAGE `1 << 13`). */
  readonly flags?: number;
}

/** A file on a person's message, as the fake keeps it. */
export interface FakeAttachment {
  readonly id: string;
  /** As Discord shows it (its own sanitising is not modelled). */
  readonly filename: string;
  readonly content_type: string;
  readonly bytes: Uint8Array;
  readonly duration_secs?: number;
}

/** A file a test has a person send. */
export interface FakeFileInput {
  readonly name: string;
  readonly mime: string;
  readonly bytes: Uint8Array;
  /** Seconds (voice messages carry it: docs message.mdx, Voice Messages). */
  readonly durationS?: number;
}

/** One request on the CDN route, whatever was answered (0: held and never answered). */
export interface DownloadRecord {
  readonly path: string;
  readonly attachmentId: string | undefined;
  readonly status: number;
  /** Whether it came with an Authorization header (the bot token must never go to the CDN). */
  readonly authorization: boolean;
  readonly at: number;
}

/** docs message.mdx, Message Flags. */
export const IS_VOICE_MESSAGE = 1 << 13;
/** How long a signed link is valid (not documented; ~24 h: merlinfuchs/cdproxy README, "expire 24 hours … after it has been obtained"). */
export const LINK_LIFETIME_MS = 24 * 60 * 60 * 1000;

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly body: unknown;
  readonly at: number;
}

interface Session {
  readonly id: string;
  readonly intents: number;
  seq: number;
  /** Dispatches kept for RESUME (bounded). */
  readonly sent: { s: number; t: string; d: unknown }[];
  socket: WebSocket | undefined;
}

interface Bucket {
  readonly id: string;
  remaining: number;
  resetAt: number;
}

interface ChannelState {
  readonly channel: FakeChannel;
  readonly messages: FakeMessage[];
  /** Every POST here is refused so: `{status, code, message}`. */
  refuse?: { readonly status: number; readonly code: number; readonly message: string };
}

interface GuildState {
  readonly id: string;
  readonly name: string;
}

/**
 * A scripted network fault for one REST request: `hang` (never answered, not
 * processed), `hang-after` (processed — the message exists — but the answer
 * never comes, as when the connection dies on the way back).
 */
export type Fault = (method: string, path: string, body: unknown) => 'hang' | 'hang-after' | undefined;

export interface FakeDiscordOptions {
  readonly token?: string;
  /** How long `enforce_nonce` remembers a nonce (docs message.mdx, Create Message: "the past few minutes"; default 5 min, the fake's choice). */
  readonly nonceWindowMs?: number;
  /**
   * Messages per bucket window per channel (default 5 per 5 s). Not documented (docs rate-limits.mdx: "should not be
   * hard coded"); observed: discord/discord-api-docs#20 (5/5), alexemanuelol/rustplusplus#475 (`Limit: 5` on POST /channels/:id/messages).
   */
  readonly messageBucket?: { readonly limit: number; readonly windowMs: number };
  /** HELLO's `heartbeat_interval` (default 41 250 ms, the value Discord sends: discord/discord-api-docs#304; the docs' example says 45000). */
  readonly heartbeatIntervalMs?: number;
  /** Privileged intents switched on in the Developer Portal (default: MESSAGE_CONTENT). */
  readonly privilegedIntents?: number;
  /** How long a signed attachment link is valid (default LINK_LIFETIME_MS). */
  readonly linkLifetimeMs?: number;
}

export class FakeDiscord {
  readonly token: string;
  readonly bot: FakeDiscordUser;
  readonly applicationId: string;
  /** Every REST request, in order (bodies parsed). */
  readonly requests: RecordedRequest[] = [];
  /** IDENTIFY and RESUME payloads the gateway received, in order. */
  readonly gatewayLog: { readonly op: 'identify' | 'resume'; readonly at: number; readonly intents?: number }[] = [];
  /** Message id → times it was dispatched to a session (MESSAGE_CREATE, replays included). */
  readonly dispatched = new Map<string, number[]>();
  /** Message id → times it reached the bot, by the Gateway or in a fetched page of messages. */
  readonly handed = new Map<string, number[]>();
  privilegedIntents: number;
  heartbeatIntervalMs: number;
  /** When false, heartbeats get no ACK (a zombie connection). */
  ackHeartbeats = true;
  private readonly nonceWindowMs: number;
  private readonly bucketSpec: { limit: number; windowMs: number };
  private server: Server | undefined;
  private wss: WebSocketServer | undefined;
  private port = 0;
  private lastSnowflake = 0n;
  private readonly users = new Map<string, FakeDiscordUser>();
  private readonly guilds = new Map<string, GuildState>();
  private readonly channels = new Map<string, ChannelState>();
  private readonly sessions = new Map<string, Session>();
  private readonly buckets = new Map<string, Bucket>();
  /** Scripted 429s: route key ('*' for any) → queue of {retryAfter s, global}. */
  private readonly scripted429 = new Map<string, { retryAfter: number; global: boolean }[]>();
  private globalUntil = 0;
  private readonly sendListeners = new Set<(message: FakeMessage) => void>();
  /** Ids of messages the bot created, with their nonce (for dedup): `${author}:${nonce}` → message. */
  private readonly nonces = new Map<string, FakeMessage>();
  private readonly faults = new Set<Fault>();
  /** Scripted failures of channel-history reads, in order: the status each answers. */
  private readonly historyFailures: number[] = [];
  /** Every request on the CDN route, in order. */
  readonly downloads: DownloadRecord[] = [];
  private readonly linkSecret = randomBytes(32);
  private readonly linkLifetimeMs: number;
  /** Added to the wall clock for links (issuing and checking them): moves their expiry closer. */
  private linkClockOffsetMs = 0;
  /** While set, CDN requests wait here unanswered. */
  private readonly downloadHold = new DownloadHold();

  constructor(options: FakeDiscordOptions = {}) {
    this.token = options.token ?? 'MTAxNDcxNjE1NzQ4MDAwMDAwMA.GfakeT.0123456789abcdefghijklmnopqrstuvwxyzABCD';
    this.nonceWindowMs = options.nonceWindowMs ?? 5 * 60_000;
    this.bucketSpec = options.messageBucket ?? { limit: 5, windowMs: 5_000 };
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 41_250;
    this.privilegedIntents = options.privilegedIntents ?? INTENTS.MessageContent;
    this.linkLifetimeMs = options.linkLifetimeMs ?? LINK_LIFETIME_MS;
    this.applicationId = this.snowflake();
    this.bot = { id: this.applicationId, username: 'Homing Test', global_name: null, bot: true };
    this.users.set(this.bot.id, this.bot);
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  get gatewayUrl(): string {
    return `ws://127.0.0.1:${this.port}/gateway`;
  }

  /** Sockets that are identified (or resumed) right now. */
  get connectedSessions(): number {
    return [...this.sessions.values()].filter((session) => session.socket !== undefined).length;
  }

  async start(port = 0): Promise<void> {
    const server = createServer((req, res) => this.onRequest(req, res));
    server.on('clientError', (_error, socket) => socket.destroy());
    const wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 });
    server.on('upgrade', (req, socket, head) => this.onUpgrade(wss, req, socket, head));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.wss = wss;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Everything away (connections refused from now); sessions stay resumable, as Discord keeps them a while (how long is not documented: docs gateway.mdx, Resuming). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const session of this.sessions.values()) {
      session.socket?.terminate();
      session.socket = undefined;
    }
    for (const client of this.wss?.clients ?? []) client.terminate();
    this.wss?.close();
    this.wss = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  // ---- scripting -------------------------------------------------------

  addUser(username: string, options: { bot?: boolean } = {}): FakeDiscordUser {
    const user: FakeDiscordUser = { id: this.snowflake(), username, global_name: username, ...(options.bot ? { bot: true } : {}) };
    this.users.set(user.id, user);
    return user;
  }

  addGuild(name: string): string {
    const id = this.snowflake();
    this.guilds.set(id, { id, name });
    return id;
  }

  addChannel(guildId: string, name: string): FakeChannel {
    const channel: FakeChannel = { id: this.snowflake(), type: CHANNEL_TYPES.GuildText, guild_id: guildId, name };
    this.channels.set(channel.id, { channel, messages: [] });
    // docs gateway.mdx, List of Intents: CHANNEL_CREATE and THREAD_CREATE come with GUILDS.
    this.dispatchAll('CHANNEL_CREATE', this.channelPayload(channel), INTENTS.Guilds);
    return channel;
  }

  /** A public thread in a guild channel (docs channel.mdx: PUBLIC_THREAD, "a temporary sub-channel"; THREAD_CREATE has `newly_created`, docs gateway-events.mdx). */
  addThread(parentId: string, name: string): FakeChannel {
    const parent = this.channels.get(parentId)!.channel;
    const channel: FakeChannel = { id: this.snowflake(), type: CHANNEL_TYPES.PublicThread, guild_id: parent.guild_id!, parent_id: parentId, name };
    this.channels.set(channel.id, { channel, messages: [] });
    this.dispatchAll('THREAD_CREATE', { ...this.channelPayload(channel), newly_created: true }, INTENTS.Guilds);
    return channel;
  }

  /** The DM channel between the bot and `user`. */
  dmChannel(user: FakeDiscordUser): FakeChannel {
    for (const state of this.channels.values()) if (state.channel.type === CHANNEL_TYPES.DM && state.channel.recipient?.id === user.id) return state.channel;
    const channel: FakeChannel = { id: this.snowflake(), type: CHANNEL_TYPES.DM, recipient: user };
    this.channels.set(channel.id, { channel, messages: [] });
    return channel;
  }

  /** Every later POST to this channel is refused with this Discord error (50013, 50007, …); `undefined` lifts it. */
  refuseSends(channelId: string, error: { status: number; code: number; message: string } | undefined): void {
    const state = this.channels.get(channelId);
    if (!state) throw new Error(`no channel ${channelId}`);
    if (error) state.refuse = error;
    else delete state.refuse;
  }

  /** The next request on this route (`POST /channels/{id}/messages`, or '*' for any) answers 429. */
  rateLimitNext(route: string, retryAfterSeconds: number, global = false): void {
    const queue = this.scripted429.get(route) ?? [];
    queue.push({ retryAfter: retryAfterSeconds, global });
    this.scripted429.set(route, queue);
  }

  /** A person writes; the message is stored and dispatched. `mentionBot` prefixes `<@bot>`. */
  userSays(input: { from: FakeDiscordUser; channelId: string; content: string; mentionBot?: boolean; replyTo?: string; files?: readonly FakeFileInput[]; voice?: boolean }): FakeMessage {
    const state = this.channels.get(input.channelId);
    if (!state) throw new Error(`no channel ${input.channelId}`);
    const content = input.mentionBot ? `<@${this.bot.id}> ${input.content}` : input.content;
    const referenced = input.replyTo ? state.messages.find((m) => m.id === input.replyTo) : undefined;
    const message = this.store(state, {
      author: input.from,
      content,
      ...(referenced ? { message_reference: { message_id: referenced.id, channel_id: state.channel.id, ...(state.channel.guild_id ? { guild_id: state.channel.guild_id } : {}) } } : {}),
      pinged: { everyone: false, users: [], roles: [] },
      ...(input.files && input.files.length > 0
        ? {
            attachments: input.files.map((file) => ({
              id: this.snowflake(),
              filename: file.name,
              content_type: file.mime,
              bytes: file.bytes,
              ...(file.durationS !== undefined ? { duration_secs: file.durationS } : {}),
            })),
          }
        : {}),
      ...(input.voice ? { flags: IS_VOICE_MESSAGE } : {}),
    });
    return message;
  }

  /**
   * A person sends a voice message: one audio attachment, no content, IS_VOICE_MESSAGE (docs message.mdx,
   * Voice Messages; the file name `voice-message.ogg` and `audio/ogg` are what clients send, not documented).
   */
  userSendsVoice(input: { from: FakeDiscordUser; channelId: string; bytes: Uint8Array; durationS: number }): FakeMessage {
    return this.userSays({ from: input.from, channelId: input.channelId, content: '', voice: true, files: [{ name: 'voice-message.ogg', mime: 'audio/ogg', bytes: input.bytes, durationS: input.durationS }] });
  }

  /** Deletes a message: Get Channel Message answers 404 10008 for it, and its files leave the CDN. */
  deleteMessage(channelId: string, messageId: string): void {
    const state = this.channels.get(channelId);
    const index = state?.messages.findIndex((message) => message.id === messageId) ?? -1;
    if (state && index >= 0) state.messages.splice(index, 1);
  }

  /** Moves the links' clock forward: links issued before now + `ms` - lifetime have expired then. */
  advanceLinkClock(ms: number): void {
    this.linkClockOffsetMs += ms;
  }

  /** From now on CDN requests are taken and left unanswered, until the returned function is called (they are then served). */
  holdDownloads(): () => void {
    return this.downloadHold.hold();
  }

  /** The signed link to an attachment, issued now (docs reference.mdx, the example URL's shape). */
  attachmentUrl(channelId: string, attachment: FakeAttachment): string {
    const path = `/attachments/${channelId}/${attachment.id}/${encodeURIComponent(attachment.filename)}`;
    const issued = Math.floor((Date.now() + this.linkClockOffsetMs) / 1000);
    const expires = issued + Math.floor(this.linkLifetimeMs / 1000);
    const [ex, is] = [expires.toString(16), issued.toString(16)];
    return `http://127.0.0.1:${this.port}${path}?ex=${ex}&is=${is}&hm=${this.linkSignature(path, ex, is)}&`;
  }

  messages(channelId: string): readonly FakeMessage[] {
    return this.channels.get(channelId)?.messages ?? [];
  }

  /** What the bot created, everywhere, in order. */
  get sent(): FakeMessage[] {
    const all: FakeMessage[] = [];
    for (const state of this.channels.values()) all.push(...state.messages.filter((m) => m.author.id === this.bot.id));
    return all.sort((a, b) => compareIds(a.id, b.id));
  }

  onSend(listener: (message: FakeMessage) => void): () => void {
    this.sendListeners.add(listener);
    return () => this.sendListeners.delete(listener);
  }

  /** Drops every gateway socket without a close frame (a network cut): the client sees 1006 and resumes (docs gateway.mdx, Resuming: "disconnected but doesn't receive *any* close code"). */
  dropGateway(): void {
    for (const session of this.sessions.values()) {
      session.socket?.terminate();
      session.socket = undefined;
    }
  }

  /** Closes every gateway socket with `code` (4004, 4014, 4000 …: docs status-codes, Gateway Close Event Codes). */
  closeGateway(code: number, reason = ''): void {
    for (const session of this.sessions.values()) {
      session.socket?.close(code, reason);
      session.socket = undefined;
    }
  }

  /**
   * A hostile Gateway: sends `frames` as they are (text frames, not checked
   * against anything) to every open Gateway connection. Not Discord's
   * behaviour: what a broken or malicious server (or a proxy in between) could
   * send, for the client's robustness.
   */
  sendRawFrames(frames: readonly string[]): number {
    let sockets = 0;
    for (const client of this.wss?.clients ?? []) {
      if (client.readyState !== client.OPEN) continue;
      sockets++;
      for (const frame of frames) client.send(frame);
    }
    return sockets;
  }

  /** Forgets every session: a RESUME gets INVALID_SESSION and the client identifies again (missed messages are then not replayed; docs gateway-events.mdx, Invalid Session). */
  forgetSessions(): void {
    this.dropGateway();
    this.sessions.clear();
  }

  /**
   * The next `times` reads of any channel's history (`GET /channels/{id}/messages`)
   * answer `status` (a 502 from Discord's edge, an HTML page, as Cloudflare
   * answers: docs status-codes, HTTP, lists 502; the HTML body is not documented). discord.js retries a 5xx itself 3 times (@discordjs/rest
   * `retries: 3`, handleErrors), so it takes 4 for one read to fail as the bot sees it.
   */
  failHistoryReads(times: number, status = 502): void {
    for (let i = 0; i < times; i++) this.historyFailures.push(status);
  }

  /** The newest id handed out so far: every message created later has a larger one. */
  lastId(): string {
    return this.lastSnowflake.toString();
  }

  /** Forgets every nonce seen, as if Discord's nonce window ("a few minutes") had passed: a resend creates a new message. */
  forgetNonces(): void {
    this.nonces.clear();
  }

  /** Applies `fault` to every REST request until the returned function is called. */
  fault(fault: Fault): () => void {
    this.faults.add(fault);
    return () => this.faults.delete(fault);
  }

  // ---- REST ------------------------------------------------------------

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    req.on('error', () => res.destroy());
    if ((req.url ?? '').startsWith('/attachments/')) return this.onDownload(req, res);
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        this.reply(res, 413, { message: 'Request entity too large', code: 40005 }); // docs status-codes, JSON: 40005
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY) return;
      let body: unknown = undefined;
      const text = Buffer.concat(chunks).toString('utf8');
      if (text !== '') {
        try {
          body = JSON.parse(text);
        } catch {
          // docs status-codes, JSON: 50109 "The request body contains invalid JSON" (the message text is not documented).
          this.reply(res, 400, { message: '400: Bad Request', code: 50109 });
          return;
        }
      }
      try {
        this.route(req, res, body);
      } catch (error) {
        this.reply(res, 500, { message: `500: ${String(error)}`, code: 0 });
      }
    });
  }

  private route(req: IncomingMessage, res: ServerResponse, body: unknown): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    let path = url.pathname.replace(/^\/api\/v10/, '');
    try {
      path = decodeURIComponent(path); // `@me` may come as `%40me`
    } catch {
      // left as it came: no route matches it
    }
    const record = (status: number) => this.requests.push({ method, path: url.pathname + url.search, status, body, at: Date.now() });
    // docs reference.mdx, API Versioning (`/api/v{version}`) and Authentication (`Authorization: Bot <token>`). The bodies'
    // shape `{message: "<status>: <reason>", code: 0}` is observed, not documented: discord/discord-api-docs#1499 (401).
    if (!url.pathname.startsWith('/api/v10/')) {
      record(404);
      return this.reply(res, 404, { message: '404: Not Found', code: 0 });
    }
    if (req.headers.authorization !== `Bot ${this.token}`) {
      record(401);
      return this.reply(res, 401, { message: '401: Unauthorized', code: 0 });
    }
    const messagesMatch = /^\/channels\/(\d{1,20})\/messages$/.exec(path);
    const messageMatch = /^\/channels\/(\d{1,20})\/messages\/(\d{1,20})$/.exec(path);
    const typingMatch = /^\/channels\/(\d{1,20})\/typing$/.exec(path);
    const channelMatch = /^\/channels\/(\d{1,20})$/.exec(path);
    // docs rate-limits.mdx: per-route limits, counted per top-level resource (the channel id). Only message creation is
    // counted here; other routes are unlimited unless a test scripts a 429 (kinder than Discord).
    const routeKey = messagesMatch ? `${method} /channels/${messagesMatch[1]}/messages` : typingMatch ? `POST /channels/${typingMatch[1]}/typing` : `${method} ${path}`;

    const limited = this.rateLimited(routeKey, method === 'POST' && messagesMatch !== null);
    if (limited) {
      record(429);
      // docs rate-limits.mdx, Rate Limit Response Structure: {message, retry_after (float), global}.
      return this.reply(res, 429, { message: 'You are being rate limited.', retry_after: limited.retryAfter, global: limited.global }, limited.headers);
    }
    const headers = this.bucketHeaders(routeKey, method === 'POST' && messagesMatch !== null);
    let verdict: 'hang' | 'hang-after' | undefined;
    for (const fault of this.faults) verdict ??= fault(method, path, body);
    if (verdict === 'hang') {
      record(0);
      return;
    }
    const answer = (status: number, value: unknown) => {
      record(status);
      if (verdict !== 'hang-after') this.reply(res, status, value, headers);
    };

    // docs gateway.mdx, Get Gateway Bot (the numbers are the docs' example).
    if (method === 'GET' && path === '/gateway/bot') {
      return answer(200, { url: this.gatewayUrl, shards: 1, session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 1 } });
    }
    // docs user.mdx, Get Current User.
    if (method === 'GET' && path === '/users/@me') return answer(200, this.userPayload(this.bot));
    // docs change-log.mdx, June 19, 2018: empty for a bot user.
    if (method === 'GET' && path === '/users/@me/channels') return answer(200, []);
    // docs channel.mdx, Get Channel; an unknown one is 404 10003 "Unknown channel" (status-codes, JSON).
    if (method === 'GET' && channelMatch) {
      const state = this.channels.get(channelMatch[1]!);
      return state ? answer(200, this.channelPayload(state.channel)) : answer(404, { message: 'Unknown Channel', code: 10003 });
    }
    // docs channel.mdx, Trigger Typing Indicator: POST, `204`, "expires after 10 seconds"; another method is 405 (status-codes, HTTP).
    // The refusal a channel scripts (50013, 50007) applies here too: not checked against Discord.
    if (typingMatch) {
      if (method !== 'POST') return answer(405, { message: '405: Method Not Allowed', code: 0 });
      const state = this.channels.get(typingMatch[1]!);
      if (!state) return answer(404, { message: 'Unknown Channel', code: 10003 });
      if (state.refuse) return answer(state.refuse.status, { message: state.refuse.message, code: state.refuse.code });
      record(204);
      res.writeHead(204, headers).end();
      return;
    }
    // docs message.mdx, Get Channel Message; 10008 "Unknown message" (status-codes, JSON). Its attachments carry fresh links.
    if (messageMatch) {
      const state = this.channels.get(messageMatch[1]!);
      if (!state) return answer(404, { message: 'Unknown Channel', code: 10003 });
      if (method !== 'GET') return answer(405, { message: '405: Method Not Allowed', code: 0 });
      const message = state.messages.find((m) => m.id === messageMatch[2]);
      return message ? answer(200, this.messagePayload(message, state.channel)) : answer(404, { message: 'Unknown Message', code: 10008 });
    }
    if (messagesMatch) {
      const state = this.channels.get(messagesMatch[1]!);
      if (!state) return answer(404, { message: 'Unknown Channel', code: 10003 });
      if (method === 'GET') {
        const failure = this.historyFailures.shift();
        if (failure !== undefined) {
          record(failure);
          if (verdict !== 'hang-after') res.writeHead(failure, { 'content-type': 'text/html' }).end(`<html><body><h1>${failure} Bad Gateway</h1></body></html>`);
          return;
        }
        return answer(200, this.listMessages(state, url.searchParams));
      }
      if (method === 'POST') {
        const result = this.createMessage(state, body);
        return answer(result.status, result.body);
      }
      return answer(405, { message: '405: Method Not Allowed', code: 0 });
    }
    return answer(404, { message: '404: Not Found', code: 0 });
  }

  /**
   * Discord's page (discord-api-docs resources/message.mdx, "Get Channel
   * Messages": "from newest to oldest", limit 1–100, default 50): with `after`,
   * the `limit` messages right after it — discord.py's `history(after=)` takes
   * the page's first (newest) item as the next `after` (discord/abc.py,
   * `_after_strategy`), which works only so — without it, the newest `limit`;
   * a larger limit is read as 100 (discordrb, `Channel#history`: "higher than
   * 100 it will be treated as 100 on Discord's side").
   */
  private listMessages(state: ChannelState, query: URLSearchParams): unknown {
    const limit = Math.min(100, Math.max(1, Number(query.get('limit') ?? 50) || 50));
    const after = query.get('after');
    let list = state.messages;
    if (after !== null) list = list.filter((m) => compareIds(m.id, after) > 0).slice(0, limit);
    else list = list.slice(-limit);
    for (const message of list) this.noteHanded(message.id);
    return [...list].reverse().map((m) => this.messagePayload(m, state.channel));
  }

  private createMessage(state: ChannelState, raw: unknown): { status: number; body: unknown } {
    // docs status-codes, JSON: 50035 "Invalid form body", its `errors` object as in docs reference.mdx, Error Messages.
    const invalid = (field: string, message: string, code = 'BASE_TYPE_INVALID') => ({ status: 400, body: { message: 'Invalid Form Body', code: 50035, errors: { [field]: { _errors: [{ code, message }] } } } });
    // docs status-codes, JSON: 50006 "Cannot send an empty message" (Create Message needs content or another part; only content is modelled).
    if (typeof raw !== 'object' || raw === null) return { status: 400, body: { message: 'Cannot send an empty message', code: 50006 } };
    const body = raw as Record<string, unknown>;
    const content = body.content;
    if (content !== undefined && typeof content !== 'string') return invalid('content', 'Could not interpret as string.');
    if (!content) return { status: 400, body: { message: 'Cannot send an empty message', code: 50006 } };
    // Observed: `content[BASE_TYPE_MAX_LENGTH]: Must be 2000 or fewer in length.` (kacesensitive/ollama-discord#5).
    if (content.length > MAX_CONTENT) return invalid('content', `Must be ${MAX_CONTENT} or fewer in length.`, 'BASE_TYPE_MAX_LENGTH');
    // The nonce's error code and text are not checked against Discord.
    const nonce = body.nonce;
    if (nonce !== undefined && !(typeof nonce === 'string' && nonce.length <= MAX_NONCE) && !(typeof nonce === 'number' && Number.isSafeInteger(nonce))) {
      return invalid('nonce', `Must be ${MAX_NONCE} or fewer in length.`);
    }
    // docs status-codes, JSON: 50013, 50007, … (whether Discord checks them before or after the body is not documented).
    if (state.refuse) return { status: state.refuse.status, body: { message: state.refuse.message, code: state.refuse.code } };
    // docs message.mdx, Create Message `enforce_nonce`: the same author and nonce in the past few minutes returns that message.
    if (body.enforce_nonce === true && nonce !== undefined) {
      const earlier = this.nonces.get(`${this.bot.id}:${nonce}`);
      if (earlier && Date.now() - earlier.at < this.nonceWindowMs) return { status: 200, body: this.messagePayload(earlier, this.channels.get(earlier.channel_id)!.channel) };
    }
    // docs message.mdx, Message Reference Structure: `fail_if_not_exists` defaults to true; the error is observed as 50035
    // `message_reference[MESSAGE_REFERENCE_UNKNOWN_MESSAGE]: Unknown message` (TripSit/TripBot#997).
    let reference: FakeMessage['message_reference'];
    const ref = body.message_reference as Record<string, unknown> | undefined;
    if (ref !== undefined) {
      const target = typeof ref === 'object' && ref !== null && typeof ref.message_id === 'string' ? state.messages.find((m) => m.id === ref.message_id) : undefined;
      if (target) reference = { message_id: target.id, channel_id: state.channel.id, ...(state.channel.guild_id ? { guild_id: state.channel.guild_id } : {}) };
      else if (ref?.fail_if_not_exists !== false) return { status: 400, body: { message: 'Invalid Form Body', code: 50035, errors: { message_reference: { _errors: [{ code: 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE', message: 'Unknown message' }] } } } };
    }
    const message = this.store(state, {
      author: this.bot,
      content,
      ...(nonce !== undefined ? { nonce: nonce as string | number } : {}),
      ...(reference ? { message_reference: reference } : {}),
      pinged: pings(content, body.allowed_mentions),
    });
    if (nonce !== undefined) this.nonces.set(`${this.bot.id}:${nonce}`, message);
    for (const listener of this.sendListeners) listener(message);
    return { status: 200, body: this.messagePayload(message, state.channel) };
  }

  private store(state: ChannelState, fields: Omit<FakeMessage, 'id' | 'channel_id' | 'guild_id' | 'mentions' | 'at'>): FakeMessage {
    const mentions = [...fields.content.matchAll(/<@!?(\d{1,20})>/g)].map((m) => this.users.get(m[1]!)).filter((u): u is FakeDiscordUser => u !== undefined);
    const message: FakeMessage = {
      id: this.snowflake(),
      channel_id: state.channel.id,
      ...(state.channel.guild_id ? { guild_id: state.channel.guild_id } : {}),
      mentions,
      at: Date.now(),
      ...fields,
    };
    state.messages.push(message);
    // docs gateway.mdx, List of Intents: MESSAGE_CREATE comes with GUILD_MESSAGES in a guild, DIRECT_MESSAGES in a DM.
    const intent = state.channel.guild_id ? INTENTS.GuildMessages : INTENTS.DirectMessages;
    this.dispatchAll('MESSAGE_CREATE', (session: Session) => this.messagePayload(message, state.channel, session.intents), intent, message.id);
    return message;
  }

  // ---- rate limits -----------------------------------------------------

  private rateLimited(routeKey: string, counted: boolean): { retryAfter: number; global: boolean; headers: Record<string, string> } | undefined {
    const now = Date.now();
    if (this.globalUntil > now) return this.limitAnswer((this.globalUntil - now) / 1000, true, routeKey);
    for (const key of [routeKey, '*']) {
      const queue = this.scripted429.get(key);
      const next = queue?.shift();
      if (next) {
        if (next.global) this.globalUntil = now + next.retryAfter * 1000;
        else this.bucketFor(routeKey).resetAt = now + next.retryAfter * 1000;
        if (!next.global) this.bucketFor(routeKey).remaining = 0;
        return this.limitAnswer(next.retryAfter, next.global, routeKey);
      }
    }
    if (!counted) return undefined;
    const bucket = this.bucketFor(routeKey);
    if (bucket.resetAt <= now) {
      bucket.remaining = this.bucketSpec.limit;
      bucket.resetAt = now + this.bucketSpec.windowMs;
    }
    if (bucket.remaining <= 0) return this.limitAnswer((bucket.resetAt - now) / 1000, false, routeKey);
    bucket.remaining -= 1;
    return undefined;
  }

  /**
   * docs rate-limits.mdx, Exceeding A Rate Limit: `Retry-After` (whole seconds in the examples: 65 for 64.57),
   * `X-RateLimit-Scope` (user/global/shared) on 429s only, `X-RateLimit-Global: true` on a global one, which
   * carries no bucket headers in the docs' example.
   */
  private limitAnswer(retryAfter: number, global: boolean, routeKey: string): { retryAfter: number; global: boolean; headers: Record<string, string> } {
    const seconds = Math.max(0.001, Math.round(retryAfter * 1000) / 1000);
    const headers: Record<string, string> = {
      'retry-after': String(Math.ceil(seconds)),
      'x-ratelimit-scope': global ? 'global' : 'user',
      ...(global ? { 'x-ratelimit-global': 'true' } : this.bucketHeaders(routeKey, false)),
    };
    return { retryAfter: seconds, global, headers };
  }

  private bucketFor(routeKey: string): Bucket {
    let bucket = this.buckets.get(routeKey);
    if (!bucket) {
      bucket = { id: Buffer.from(routeKey).toString('hex').slice(0, 32), remaining: this.bucketSpec.limit, resetAt: 0 };
      this.buckets.set(routeKey, bucket);
    }
    return bucket;
  }

  /** docs rate-limits.mdx, Header Format: Limit, Remaining, Reset (epoch seconds), Reset-After (seconds, decimals), Bucket. */
  private bucketHeaders(routeKey: string, counted: boolean): Record<string, string> {
    if (!counted && !this.buckets.has(routeKey)) return {};
    const bucket = this.bucketFor(routeKey);
    const now = Date.now();
    const resetAfter = Math.max(0, (bucket.resetAt - now) / 1000);
    return {
      'x-ratelimit-limit': String(this.bucketSpec.limit),
      'x-ratelimit-remaining': String(Math.max(0, bucket.resetAt <= now ? this.bucketSpec.limit : bucket.remaining)),
      'x-ratelimit-reset': String(bucket.resetAt / 1000),
      'x-ratelimit-reset-after': resetAfter.toFixed(3),
      'x-ratelimit-bucket': bucket.id,
    };
  }

  private reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.headersSent) return;
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers }).end(text);
  }

  // ---- gateway ---------------------------------------------------------

  private onUpgrade(wss: WebSocketServer, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/gateway' && url.pathname !== '/gateway/') {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      // docs gateway.mdx, Connecting (`?v=10&encoding=json`); status-codes: 4012 "Invalid API version". Discord also takes
      // `encoding=etf`; the fake refuses it the same way.
      if (url.searchParams.get('v') !== '10' || (url.searchParams.get('encoding') ?? 'json') !== 'json') {
        ws.close(4012, 'Invalid API version');
        return;
      }
      this.onSocket(ws);
    });
  }

  private onSocket(ws: WebSocket): void {
    let session: Session | undefined;
    let lastBeat = Date.now();
    const interval = this.heartbeatIntervalMs;
    // docs gateway.mdx, Sending Heartbeats: a client that "fails to send a heartbeat event in time" is closed. The
    // tolerance (2 intervals + 5 s) and the code (4009, "Session timed out") are the fake's choice.
    const zombie = setInterval(() => {
      if (Date.now() - lastBeat > interval * 2 + 5_000) ws.close(4009, 'Session timed out');
    }, Math.min(interval, 5_000));
    zombie.unref();
    ws.on('error', () => ws.terminate());
    ws.on('close', () => {
      clearInterval(zombie);
      if (session && session.socket === ws) session.socket = undefined;
    });
    // docs gateway.mdx, Hello Event: op 10 with `heartbeat_interval` first.
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: interval }, s: null, t: null }));
    ws.on('message', (data, isBinary) => {
      // docs status-codes: 4002 "Decode error" for an invalid payload (a binary frame counts as one here: not checked).
      if (isBinary) return ws.close(4002, 'Decode error');
      let payload: { op?: unknown; d?: unknown };
      try {
        payload = JSON.parse(String(data)) as { op?: unknown; d?: unknown };
      } catch {
        return ws.close(4002, 'Decode error');
      }
      const d = (typeof payload.d === 'object' && payload.d !== null ? payload.d : {}) as Record<string, unknown>;
      switch (payload.op) {
        case 1:
          // docs gateway.mdx, Sending Heartbeats: every heartbeat gets op 11 HEARTBEAT_ACK.
          lastBeat = Date.now();
          if (this.ackHeartbeats) ws.send(JSON.stringify({ op: 11, d: null, s: null, t: null }));
          return;
        case 2: {
          // docs status-codes, Gateway Close Event Codes: 4005 a second identify, 4004 a wrong token, 4013 invalid
          // intents, 4014 a privileged intent not switched on (docs gateway.mdx, Gateway Restrictions). The token
          // goes without "Bot " (discord/discord-api-docs#602); that the fake also takes it with one is not checked.
          if (session) return ws.close(4005, 'Already authenticated');
          this.gatewayLog.push({ op: 'identify', at: Date.now(), intents: Number(d.intents) });
          if (d.token !== this.token && d.token !== `Bot ${this.token}`) return ws.close(4004, 'Authentication failed.');
          const intents = Number(d.intents);
          if (!Number.isSafeInteger(intents) || intents < 0) return ws.close(4013, 'Invalid intent(s).');
          if ((intents & PRIVILEGED & ~this.privilegedIntents) !== 0) return ws.close(4014, 'Disallowed intent(s).');
          session = { id: randomHex(16), intents, seq: 0, sent: [], socket: ws };
          this.sessions.set(session.id, session);
          const guilds = [...this.guilds.values()];
          // docs gateway-events.mdx, Ready: guilds start unavailable, then a GUILD_CREATE each (docs gateway.mdx, Guild
          // Availability; it needs GUILDS). private_channels is empty for a bot (docs change-log.mdx, June 19, 2018).
          this.dispatch(session, 'READY', {
            v: 10,
            user: this.userPayload(this.bot),
            guilds: guilds.map((guild) => ({ id: guild.id, unavailable: true })),
            session_id: session.id,
            resume_gateway_url: this.gatewayUrl,
            shard: [0, 1],
            application: { id: this.applicationId, flags: 0 },
            private_channels: [],
            presences: [],
            relationships: [],
          });
          if (intents & INTENTS.Guilds) for (const guild of guilds) this.dispatch(session, 'GUILD_CREATE', this.guildPayload(guild));
          return;
        }
        case 6: {
          // docs gateway.mdx, Resuming: the missed events in order, then RESUMED; a session that cannot be resumed gets
          // op 9 INVALID_SESSION `d: false` (docs gateway-events.mdx, Invalid Session). How long Discord keeps a session
          // and how many events it keeps (1000 here) are not documented.
          if (session) return ws.close(4005, 'Already authenticated');
          this.gatewayLog.push({ op: 'resume', at: Date.now() });
          if (d.token !== this.token && d.token !== `Bot ${this.token}`) return ws.close(4004, 'Authentication failed.');
          const known = typeof d.session_id === 'string' ? this.sessions.get(d.session_id) : undefined;
          const seq = Number(d.seq);
          if (!known || !Number.isSafeInteger(seq) || seq > known.seq || (known.sent.length > 0 && known.sent[0]!.s > seq + 1)) {
            ws.send(JSON.stringify({ op: 9, d: false, s: null, t: null }));
            return;
          }
          known.socket?.terminate();
          session = known;
          known.socket = ws;
          for (const event of known.sent) if (event.s > seq) ws.send(JSON.stringify({ op: 0, ...event }));
          for (const event of known.sent) if (event.s > seq && event.t === 'MESSAGE_CREATE') this.noteDispatched(event.d);
          this.dispatch(known, 'RESUMED', null);
          return;
        }
        // docs status-codes: 4003 a payload before identifying, 4001 an unknown opcode.
        case 3:
        case 4:
        case 8:
          if (!session) return ws.close(4003, 'Not authenticated.');
          return;
        default:
          if (!session) return ws.close(4003, 'Not authenticated.');
          return ws.close(4001, 'Unknown opcode.');
      }
    });
  }

  /** Sends a dispatch to one session (kept for RESUME); a session without a socket keeps it for later. */
  private dispatch(session: Session, t: string, d: unknown): void {
    session.seq += 1;
    const event = { s: session.seq, t, d };
    session.sent.push(event);
    if (session.sent.length > 1000) session.sent.shift();
    if (session.socket && session.socket.readyState === session.socket.OPEN) {
      session.socket.send(JSON.stringify({ op: 0, ...event }));
      if (t === 'MESSAGE_CREATE') this.noteDispatched(d);
    }
  }

  private dispatchAll(t: string, d: unknown | ((session: Session) => unknown), intent: number, _messageId?: string): void {
    for (const session of this.sessions.values()) {
      if ((session.intents & intent) === 0) continue;
      this.dispatch(session, t, typeof d === 'function' ? (d as (session: Session) => unknown)(session) : d);
    }
  }

  private noteDispatched(d: unknown): void {
    const id = (d as { id?: string }).id;
    if (!id) return;
    const times = this.dispatched.get(id) ?? [];
    times.push(Date.now());
    this.dispatched.set(id, times);
    this.noteHanded(id);
  }

  private noteHanded(id: string): void {
    const times = this.handed.get(id) ?? [];
    times.push(Date.now());
    this.handed.set(id, times);
  }

  // ---- payloads --------------------------------------------------------

  /** docs user.mdx, User Object; discriminator "0" for the new usernames (docs change-log.mdx, May 03, 2023). */
  private userPayload(user: FakeDiscordUser): unknown {
    return { id: user.id, username: user.username, discriminator: '0', global_name: user.global_name, avatar: null, ...(user.bot ? { bot: true } : {}), flags: 0 };
  }

  /** docs channel.mdx, Channel Object (threads: `thread_metadata`); a subset of its fields. */
  private channelPayload(channel: FakeChannel): Record<string, unknown> {
    const base = { id: channel.id, type: channel.type, flags: 0, last_message_id: this.channels.get(channel.id)?.messages.at(-1)?.id ?? null };
    if (channel.type === CHANNEL_TYPES.DM) return { ...base, recipients: channel.recipient ? [this.userPayload(channel.recipient)] : [] };
    if (channel.type === CHANNEL_TYPES.PublicThread) {
      return {
        ...base,
        guild_id: channel.guild_id,
        parent_id: channel.parent_id,
        name: channel.name,
        owner_id: this.bot.id,
        rate_limit_per_user: 0,
        message_count: 0,
        member_count: 1,
        thread_metadata: { archived: false, auto_archive_duration: 1440, archive_timestamp: new Date().toISOString(), locked: false },
      };
    }
    return { ...base, guild_id: channel.guild_id, name: channel.name, position: 0, parent_id: null, permission_overwrites: [], nsfw: false, topic: null, rate_limit_per_user: 0 };
  }

  /** docs gateway-events.mdx, Guild Create (a guild object with channels and threads); the values are the fake's. */
  private guildPayload(guild: GuildState): Record<string, unknown> {
    const inGuild = [...this.channels.values()].map((s) => s.channel).filter((c) => c.guild_id === guild.id);
    return {
      id: guild.id,
      name: guild.name,
      icon: null,
      owner_id: '1',
      roles: [{ id: guild.id, name: '@everyone', permissions: '1071698660929', position: 0, color: 0, hoist: false, managed: false, mentionable: false, flags: 0 }],
      emojis: [],
      stickers: [],
      features: [],
      member_count: 2,
      members: [],
      channels: inGuild.filter((c) => c.type !== CHANNEL_TYPES.PublicThread).map((c) => this.channelPayload(c)),
      threads: inGuild.filter((c) => c.type === CHANNEL_TYPES.PublicThread).map((c) => this.channelPayload(c)),
      presences: [],
      voice_states: [],
      stage_instances: [],
      guild_scheduled_events: [],
      joined_at: new Date().toISOString(),
      large: false,
      unavailable: false,
      verification_level: 0,
      default_message_notifications: 0,
      explicit_content_filter: 0,
      mfa_level: 0,
      premium_tier: 0,
      nsfw_level: 0,
      preferred_locale: 'en-US',
      system_channel_flags: 0,
    };
  }

  private messagePayload(message: FakeMessage, channel: FakeChannel, intents = INTENTS.MessageContent): unknown {
    const mentionsBot = message.mentions.some((user) => user.id === this.bot.id);
    // Discord withholds content from bots without MESSAGE_CONTENT, except in DMs, mentions and their own messages
    // (docs gateway.mdx, Message Content Intent). Message types: DEFAULT 0, REPLY 19 (docs message.mdx, Message Types).
    const visible = (intents & INTENTS.MessageContent) !== 0 || channel.type === CHANNEL_TYPES.DM || mentionsBot || message.author.id === this.bot.id;
    const referenced = message.message_reference ? this.channels.get(message.message_reference.channel_id)?.messages.find((m) => m.id === message.message_reference!.message_id) : undefined;
    return {
      id: message.id,
      type: message.message_reference ? 19 : 0,
      channel_id: message.channel_id,
      ...(message.guild_id ? { guild_id: message.guild_id, member: { roles: [], joined_at: new Date(message.at).toISOString(), deaf: false, mute: false, flags: 0 } } : {}),
      author: this.userPayload(message.author),
      content: visible ? message.content : '',
      timestamp: new Date(message.at).toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: message.pinged.everyone,
      mentions: message.mentions.map((user) => this.userPayload(user)),
      mention_roles: [],
      attachments: (message.attachments ?? []).map((file) => this.attachmentPayload(message.channel_id, file)),
      embeds: [],
      pinned: false,
      flags: message.flags ?? 0,
      ...(message.nonce !== undefined ? { nonce: message.nonce } : {}), // docs message.mdx: the nonce "will appear in the Message Create event"
      ...(message.message_reference ? { message_reference: { type: 0, ...message.message_reference } } : {}),
      ...(referenced ? { referenced_message: { id: referenced.id, channel_id: referenced.channel_id, author: this.userPayload(referenced.author), content: visible ? referenced.content : '', type: 0, timestamp: new Date(referenced.at).toISOString(), mentions: [], attachments: [], embeds: [] } } : {}),
    };
  }

  /** docs message.mdx, Attachment Object (`proxy_url` on the same route here: Discord's media proxy is not modelled). */
  private attachmentPayload(channelId: string, file: FakeAttachment): unknown {
    const url = this.attachmentUrl(channelId, file);
    return {
      id: file.id,
      filename: file.filename,
      size: file.bytes.length,
      url,
      proxy_url: url,
      content_type: file.content_type,
      ...(file.duration_secs !== undefined ? { duration_secs: file.duration_secs, waveform: Buffer.alloc(16, 128).toString('base64') } : {}),
    };
  }

  private linkSignature(path: string, ex: string, is: string): string {
    return createHmac('sha256', this.linkSecret).update(`${path}\n${ex}\n${is}`).digest('hex');
  }

  /**
   * The CDN route: the file of a link whose signature holds and whose `ex` has not passed (the fake's link
   * clock), else `404 This content is no longer available.` (observed: useapi/discord-cdn-proxy README; the
   * body's exact form is the fake's). No token needed; whether one came is recorded.
   */
  private onDownload(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = /^\/attachments\/(\d{1,20})\/(\d{1,20})\/([^/]+)$/.exec(url.pathname);
    const record = (status: number) =>
      this.downloads.push({ path: url.pathname + url.search, attachmentId: match?.[2], status, authorization: req.headers.authorization !== undefined, at: Date.now() });
    const serve = () => {
      if (res.destroyed) return;
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        record(405);
        return void res.writeHead(405).end();
      }
      const [ex, is, hm] = [url.searchParams.get('ex') ?? '', url.searchParams.get('is') ?? '', url.searchParams.get('hm') ?? ''];
      const file = match ? this.attachment(match[1]!, match[2]!) : undefined;
      const valid = file !== undefined && hm === this.linkSignature(url.pathname, ex, is) && parseInt(ex, 16) * 1000 > Date.now() + this.linkClockOffsetMs;
      if (!valid) {
        record(404);
        return void res.writeHead(404, { 'content-type': 'text/plain' }).end('This content is no longer available.');
      }
      record(200);
      res.writeHead(200, { 'content-type': file.content_type, 'content-length': file.bytes.length }).end(req.method === 'HEAD' ? undefined : Buffer.from(file.bytes));
    };
    if (this.downloadHold.keep(serve)) record(0);
    else serve();
  }

  private attachment(channelId: string, attachmentId: string): FakeAttachment | undefined {
    for (const message of this.channels.get(channelId)?.messages ?? []) {
      const file = message.attachments?.find((candidate) => candidate.id === attachmentId);
      if (file) return file;
    }
    return undefined;
  }

  /** docs reference.mdx, Snowflakes: `(timestamp_ms - DISCORD_EPOCH) << 22` (the fake counts up in the low bits). */
  private snowflake(): string {
    const ms = BigInt(Date.now()) - DISCORD_EPOCH;
    let next = ms << 22n;
    if (next <= this.lastSnowflake) next = this.lastSnowflake + 1n;
    this.lastSnowflake = next;
    return next.toString();
  }
}

/**
 * What a message pings, given its allowed_mentions (absent: everything its content names). docs message.mdx, Allowed
 * Mentions Object: default `parse: ["users", "roles", "everyone"]` in regular messages, "everyone" covers @everyone and
 * @here; mention formats `<@id>`, `<@!id>`, `<@&id>` (docs reference.mdx, Message Formatting). Not modelled: the
 * MENTION_EVERYONE permission @everyone needs, and the 400 for `parse` together with `users`/`roles`.
 */
function pings(content: string, allowed: unknown): FakeMessage['pinged'] {
  const everyone = /@(everyone|here)\b/.test(content);
  const users = [...content.matchAll(/<@!?(\d{1,20})>/g)].map((m) => m[1]!);
  const roles = [...content.matchAll(/<@&(\d{1,20})>/g)].map((m) => m[1]!);
  if (typeof allowed !== 'object' || allowed === null) return { everyone, users, roles };
  const spec = allowed as { parse?: unknown; users?: unknown; roles?: unknown };
  const parse = Array.isArray(spec.parse) ? spec.parse : [];
  const allowedUsers = Array.isArray(spec.users) ? spec.users : [];
  const allowedRoles = Array.isArray(spec.roles) ? spec.roles : [];
  return {
    everyone: everyone && parse.includes('everyone'),
    users: users.filter((id) => parse.includes('users') || allowedUsers.includes(id)),
    roles: roles.filter((id) => parse.includes('roles') || allowedRoles.includes(id)),
  };
}

export function compareIds(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function randomHex(bytes: number): string {
  let out = '';
  for (let i = 0; i < bytes; i++) out += Math.floor(Math.random() * 256).toString(16).padStart(2, '0');
  return out;
}
