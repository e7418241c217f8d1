import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { DownloadHold } from './download-hold';

/**
 * Slack on 127.0.0.1, written from Slack's documentation (each behaviour's
 * source is in test/fixtures/slack-api.md, named by the short tags in the
 * comments below), so @slack/web-api and @slack/socket-mode run against it
 * unchanged. No kinder than the real service:
 *
 * Web API (`POST /api/<method>`, form or JSON bodies, the token as
 * `Authorization: Bearer` or a `token` field; every answer HTTP 200 with
 * `{ok:false, error}` on failure, except `429` + `Retry-After`) [web-api]:
 * - `auth.test` (bot token) [auth.test];
 * - `apps.connections.open` (app-level token, in the header only): a
 *   single-use `ws://` URL [connections.open];
 * - `chat.postMessage` (`channel`, `text`, `thread_ts`): `channel_not_found`,
 *   `not_in_channel`, `is_archived`, `no_text`; text past 40 000 characters cut
 *   [postMessage]; no idempotency key; a per-channel budget of posts
 *   (`429`, `Retry-After` in seconds) [rate-limits]; scripted 429s, refusals
 *   and hangs;
 * - `conversations.history` (top-level messages newest first, `oldest`,
 *   `latest`, `inclusive`, `limit` ≤ 999, `cursor` pages toward older ones,
 *   `has_more`, thread roots with `reply_count`/`latest_reply`) [history];
 *   `users.conversations` (the DMs and channels the bot is in, paged) [users.conversations];
 *   `conversations.replies` (the root first, then its replies oldest first,
 *   `cursor` pages forward) [replies]; scripted failures of both.
 *
 * Socket Mode (`/link/?ticket=…`) [socket-mode]: `hello` first; `events_api`
 * envelopes `{envelope_id, payload: {event_id, event, …}, type,
 * accepts_response_payload, retry_attempt, retry_reason}` for the conversations
 * the bot is in (a message event for every message there, the bot's own
 * included, and an `app_mention` besides for a mention) [events]; an envelope
 * not acknowledged (`{envelope_id}`) within `ackTimeoutMs` is sent again with
 * `retry_attempt` + 1 and `retry_reason: "timeout"` after each of
 * `retryDelaysMs`, then dropped [retries]; `disconnect` messages
 * (`refresh_requested`) ask the client to move to a new connection; pings.
 *
 * Files (sources at the end of this paragraph; test/fixtures/slack-api.md has
 * no section on them yet): a person shares files with a message (`subtype:
 * "file_share"`, a `files` array of file objects: `id`, `name`, `title`,
 * `mimetype`, `filetype`, `size`, `mode: "hosted"`, `url_private`,
 * `url_private_download`; a recorded audio clip adds `subtype:
 * "slack_audio"`, `media_display_type: "audio"`, `duration_ms`), in events and
 * history pages alike; a deleted file is `{id, mode: "tombstone"}`. Their
 * bytes are served at `GET /files-pri/<team>-<file>/[download/]<name>` (the
 * shape of Slack's files.slack.com URLs) to `Authorization: Bearer <bot
 * token>` only; without it, or with another token, or while the bot lacks the
 * files:read scope (`filesRead` false), the answer is Slack's sign-in page,
 * HTTP 200 `text/html`. `url_private_download` is served as a download
 * (`Content-Disposition: attachment`). Tests hold downloads
 * (`holdDownloads`) and read every request on the route (`downloads`).
 * Sources: api.slack.com/types/file (fields, modes, "Authentication is
 * required to retrieve file URLs", `Authorization: Bearer` with `files:read`,
 * url_private_download "includes headers to force a browser download");
 * gist.github.com/ErikKalkoken/f3ab28617d5099531ded865d111dbac1 (a files-pri
 * URL fetched with the Bearer header; its comments: without the right token or
 * permissions "you get a HTML asking you to login"); zulip/zulip's Slack
 * importer and @slack/web-api's File type for `tombstone`, `slack_audio`,
 * `duration_ms`. The exact sign-in page is the fake's. Comments below cite
 * this paragraph as (Files, above).
 */

export interface FakeSlackUser {
  readonly id: string;
  readonly name: string;
  readonly botId?: string;
}

export interface FakeSlackChannel {
  readonly id: string;
  readonly name: string;
  readonly kind: 'channel' | 'im';
  /** For a DM: the person it is with. */
  readonly user?: string;
}

export interface FakeSlackMessage {
  readonly channel: string;
  readonly ts: string;
  readonly thread_ts?: string;
  readonly user: string;
  readonly bot_id?: string;
  readonly text: string;
  /** Files shared with it (the message is then a `file_share`). */
  readonly files?: readonly FakeSlackFile[];
  /** When the fake stored it (ms). */
  readonly at: number;
}

/** A file a person shares (FakeSlack.userSays `files`). */
export interface FakeSlackFileInput {
  readonly name: string;
  readonly mime: string;
  readonly bytes: Buffer;
  /** A clip recorded in Slack: `subtype: "slack_audio"` with its duration. */
  readonly audioClip?: { readonly durationMs: number };
}

/** A file as the fake keeps it. */
export interface FakeSlackFile {
  readonly id: string;
  readonly name: string;
  readonly mimetype: string;
  readonly filetype: string;
  readonly bytes: Buffer;
  readonly user: string;
  readonly created: number;
  readonly audioClip?: { readonly durationMs: number };
}

/** One request on the files route, whatever was answered (0: held and never answered). */
export interface FileDownload {
  readonly path: string;
  readonly fileId: string | undefined;
  readonly status: number;
  /** What it was served as: the file, the sign-in page, or nothing (404, 405, held). */
  readonly served: 'file' | 'sign-in page' | 'nothing';
  /** Which credentials came: the bot token, another Authorization header, or none (the token itself is never kept). */
  readonly authorization: 'bot token' | 'other' | 'none';
  readonly at: number;
}

export interface RecordedCall {
  readonly method: string;
  readonly body: Record<string, unknown>;
  readonly status: number;
  readonly error?: string;
  readonly at: number;
}

/** A scripted answer to a Web API call: hang (never answer), or create the message and never answer ('hang-after'). */
export type Fault = (method: string, body: Record<string, unknown>) => 'hang' | 'hang-after' | undefined;

export interface FakeSlackOptions {
  readonly appToken?: string;
  readonly botToken?: string;
  /** How long Slack waits for an envelope's acknowledgement (3 s [socket-mode]). */
  readonly ackTimeoutMs?: number;
  /** The waits before each re-send of an unacknowledged event (Events API: at once, 1 min, 5 min [retries]). */
  readonly retryDelaysMs?: readonly number[];
  /** Posts per channel per window before a 429 (chat.postMessage: about one a second, short bursts allowed [rate-limits]). */
  readonly postBucket?: { readonly limit: number; readonly windowMs: number };
  readonly pingIntervalMs?: number;
}

const MAX_BODY = 1024 * 1024;
/** chat.postMessage keeps 40 000 characters of `text` [postMessage]. */
const MAX_TEXT = 40_000;

interface ChannelState {
  readonly channel: FakeSlackChannel;
  readonly messages: FakeSlackMessage[];
  readonly members: Set<string>;
  archived: boolean;
  refusal: string | undefined;
}

interface Pending {
  readonly eventId: string;
  readonly payload: Record<string, unknown>;
  attempt: number;
  acked: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The envelope id of the current delivery. */
  envelopeId: string | undefined;
}

export class FakeSlack {
  readonly appToken: string;
  readonly botToken: string;
  readonly teamId = slackId('T');
  readonly appId = slackId('A');
  readonly bot: FakeSlackUser;
  /** Every Web API call, in order. */
  readonly calls: RecordedCall[] = [];
  /** Message ts → times it reached the bot: in an envelope (re-sends included) or in a history or replies page. */
  readonly handed = new Map<string, number[]>();
  /** Every envelope sent, in order, and whether it was acknowledged. */
  readonly envelopes: { readonly eventId: string; readonly envelopeId: string; readonly retryAttempt: number; readonly eventType: string; readonly ts?: string }[] = [];
  /** Event ids acknowledged, with how many acknowledgements each got. */
  readonly acked = new Map<string, number>();
  /** Events dropped after their last re-send went unacknowledged. */
  readonly dropped: string[] = [];
  /** Socket Mode connections opened (hello sent), in all. */
  connectionsOpened = 0;
  /** Every request on the files route, in order. */
  readonly downloads: FileDownload[] = [];
  /** Whether the bot token has the files:read scope; without it the files route answers the sign-in page. */
  filesRead = true;
  private readonly ackTimeoutMs: number;
  private readonly retryDelaysMs: readonly number[];
  private readonly postBucket: { limit: number; windowMs: number };
  private readonly pingIntervalMs: number;
  private server: Server | undefined;
  private wss: WebSocketServer | undefined;
  private port = 0;
  private lastTsMicros = 0n;
  private readonly users = new Map<string, FakeSlackUser>();
  private readonly channels = new Map<string, ChannelState>();
  private readonly tickets = new Set<string>();
  private readonly sockets = new Set<WebSocket>();
  private readonly pending = new Map<string, Pending>();
  private readonly byEnvelope = new Map<string, Pending>();
  private readonly posts = new Map<string, number[]>();
  private readonly scripted429: { method: string; retryAfter: number }[] = [];
  private readonly faults = new Set<Fault>();
  private readonly historyFailures: number[] = [];
  private readonly sendListeners = new Set<(message: FakeSlackMessage) => void>();
  private readonly files = new Map<string, FakeSlackFile>();
  private readonly deletedFiles = new Set<string>();
  /** While set, requests on the files route wait here unanswered. */
  private readonly downloadHold = new DownloadHold();
  /** Whether new envelopes are acknowledged-or-not as usual, or held back (not sent) until released. */
  private holdEvents = false;
  /** While true, acknowledgements are lost on the way: Slack never sees them and keeps re-sending. */
  loseAcks = false;
  /** While false, a new connection never gets its hello (a broken link). */
  sayHello = true;

  constructor(options: FakeSlackOptions = {}) {
    this.appToken = options.appToken ?? `xapp-1-${this.appId}-1234567890123-${'a1b2c3d4'.repeat(8)}`;
    this.botToken = options.botToken ?? `xoxb-1234567890123-1234567890123-${'AbCdEfGh'.repeat(3)}`;
    this.ackTimeoutMs = options.ackTimeoutMs ?? 3_000;
    this.retryDelaysMs = options.retryDelaysMs ?? [0, 60_000, 300_000];
    this.postBucket = { ...(options.postBucket ?? { limit: 5, windowMs: 5_000 }) };
    this.pingIntervalMs = options.pingIntervalMs ?? 10_000;
    this.bot = { id: slackId('U'), name: 'homing', botId: slackId('B') };
    this.users.set(this.bot.id, this.bot);
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  /** Socket Mode connections open right now (hello sent). */
  get connectedSockets(): number {
    return this.sockets.size;
  }

  async start(port = 0): Promise<void> {
    const server = createServer((req, res) => this.onRequest(req, res));
    server.on('clientError', (_error, socket) => socket.destroy());
    const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
    wss.on('error', () => undefined);
    server.on('upgrade', (req, socket, head) => this.onUpgrade(wss, req, socket, head));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.wss = wss;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Everything away (connections refused from now); the events not acknowledged stay owed, as Slack keeps re-sending them. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.terminate();
    this.sockets.clear();
    for (const client of this.wss?.clients ?? []) client.terminate();
    this.wss?.close();
    this.wss = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Stops every timer (re-sends): the fake is done with. */
  async dispose(): Promise<void> {
    for (const pending of this.pending.values()) clearTimeout(pending.timer);
    this.pending.clear();
    await this.stop();
  }

  // ---- scripting -------------------------------------------------------

  addUser(name: string): FakeSlackUser {
    const user = { id: slackId('U'), name };
    this.users.set(user.id, user);
    return user;
  }

  /** A channel; the bot is in it unless `botIn` is false (then posting answers `not_in_channel` [postMessage]). */
  addChannel(name: string, options: { botIn?: boolean } = {}): FakeSlackChannel {
    const channel: FakeSlackChannel = { id: slackId('C'), name, kind: 'channel' };
    this.channels.set(channel.id, { channel, messages: [], members: new Set(options.botIn === false ? [] : [this.bot.id]), archived: false, refusal: undefined });
    return channel;
  }

  /** The bot's DM with a person (`D…`). */
  dmWith(user: FakeSlackUser): FakeSlackChannel {
    for (const state of this.channels.values()) if (state.channel.kind === 'im' && state.channel.user === user.id) return state.channel;
    const channel: FakeSlackChannel = { id: slackId('D'), name: user.name, kind: 'im', user: user.id };
    this.channels.set(channel.id, { channel, messages: [], members: new Set([this.bot.id, user.id]), archived: false, refusal: undefined });
    return channel;
  }

  archive(channelId: string): void {
    this.state(channelId).archived = true;
  }

  /** The bot leaves a channel: posting and reading answer `not_in_channel`. */
  removeBot(channelId: string): void {
    this.state(channelId).members.delete(this.bot.id);
  }

  /** Every post to this channel answers `{ok:false, error}` until called again without one. */
  refuseSends(channelId: string, error: string | undefined): void {
    this.state(channelId).refusal = error;
  }

  /** The next call of `method` answers 429 with `Retry-After: retryAfterSeconds`. */
  rateLimitNext(method: string, retryAfterSeconds: number): void {
    this.scripted429.push({ method, retryAfter: retryAfterSeconds });
  }

  /** The next `times` history or replies reads answer HTTP `status`. */
  failHistoryReads(times: number, status = 503): void {
    for (let i = 0; i < times; i++) this.historyFailures.push(status);
  }

  fault(fault: Fault): () => void {
    this.faults.add(fault);
    return () => this.faults.delete(fault);
  }

  /** New events are kept back (not sent) until `releaseEvents` (as if Slack were slow to deliver). */
  holdBackEvents(): void {
    this.holdEvents = true;
  }

  releaseEvents(): void {
    this.holdEvents = false;
    for (const pending of this.pending.values()) if (!pending.acked && pending.timer === undefined && pending.envelopeId === undefined) this.deliver(pending);
  }

  /**
   * A person writes (`text` as typed: Slack escapes `&`, `<`, `>` in the event
   * [formatting]); `mentionBot` puts `<@bot>` first, as the client does for `@app`.
   * With `files`, a file_share message carrying them, `text` possibly empty (Files, above).
   */
  userSays(input: { from: FakeSlackUser; channelId: string; text: string; mentionBot?: boolean; threadTs?: string; files?: readonly FakeSlackFileInput[] }): FakeSlackMessage {
    const state = this.state(input.channelId);
    const text = `${input.mentionBot ? `<@${this.bot.id}> ` : ''}${escapeText(input.text)}`;
    const files = (input.files ?? []).map((file) => this.addFile(file, input.from));
    const message = this.store(state, { user: input.from.id, text, ...(input.threadTs ? { thread_ts: input.threadTs } : {}), ...(files.length > 0 ? { files } : {}) });
    this.announce(state, message);
    return message;
  }

  /** A file is deleted: messages show it as a tombstone, and its URLs answer 404 (Files, above). */
  deleteFile(fileId: string): void {
    this.deletedFiles.add(fileId);
  }

  /** From now on requests on the files route are taken and left unanswered, until the returned function is called (they are then served). */
  holdDownloads(): () => void {
    return this.downloadHold.hold();
  }

  /** A file's `url_private` or `url_private_download` (Slack's shape: files.slack.com/files-pri/<team>-<file>/[download/]<name>). */
  fileUrl(file: FakeSlackFile, download = true): string {
    return `http://127.0.0.1:${this.port}/files-pri/${this.teamId}-${file.id}/${download ? 'download/' : ''}${encodeURIComponent(file.name)}`;
  }

  /** Messages of a channel (a thread's replies among them), oldest first. */
  messages(channelId: string): readonly FakeSlackMessage[] {
    return this.state(channelId).messages;
  }

  /** Every message the bot posted, in order. */
  get sent(): FakeSlackMessage[] {
    return [...this.channels.values()].flatMap((state) => state.messages.filter((message) => message.user === this.bot.id)).sort((a, b) => compareTs(a.ts, b.ts));
  }

  onSend(listener: (message: FakeSlackMessage) => void): () => void {
    this.sendListeners.add(listener);
    return () => this.sendListeners.delete(listener);
  }

  /** Slack asks every connection to move (`disconnect`, `refresh_requested`): the client opens a new one [socket-mode]. */
  rotate(): void {
    for (const socket of this.sockets) socket.send(JSON.stringify({ type: 'disconnect', reason: 'refresh_requested', debug_info: { host: 'applink-fake' } }));
  }

  /** Every Socket Mode connection drops without a close frame (a network failure). */
  dropSockets(): void {
    for (const socket of this.sockets) socket.terminate();
  }

  /** The newest ts given so far. */
  lastTs(): string {
    return tsOf(this.lastTsMicros);
  }

  // ---- Web API ---------------------------------------------------------

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    req.on('error', () => res.destroy());
    if ((req.url ?? '').startsWith('/files-pri/')) return this.onFileRequest(req, res);
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        this.reply(res, 413, { ok: false, error: 'request_too_large' });
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY) return;
      const url = new URL(req.url ?? '/', 'http://localhost');
      const method = /^\/api\/([a-zA-Z.]+)$/.exec(url.pathname)?.[1];
      if (!method) return this.reply(res, 404, { ok: false, error: 'unknown_method' });
      const body = parseBody(req.headers['content-type'], Buffer.concat(chunks).toString('utf8'), url.searchParams);
      if (!body) return this.reply(res, 200, { ok: false, error: 'invalid_form_data' }); // [web-api]: a body Slack cannot read
      try {
        this.route(method, req, res, body);
      } catch (error) {
        this.reply(res, 500, { ok: false, error: 'fatal_error', detail: String(error) });
      }
    });
  }

  private route(method: string, req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): void {
    const answer = (status: number, payload: Record<string, unknown>, headers: Record<string, string> = {}) => {
      this.calls.push({ method, body, status, ...(payload.ok === false ? { error: String(payload.error) } : {}), at: Date.now() });
      this.reply(res, status, payload, headers);
    };
    const header = req.headers.authorization;
    const bearer = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : undefined;
    const token = bearer ?? (typeof body.token === 'string' ? body.token : undefined);
    // [web-api]: no token is `not_authed`, a wrong one `invalid_auth`.
    if (token === undefined) return answer(200, { ok: false, error: 'not_authed' });
    const scripted = this.scripted429.findIndex((entry) => entry.method === method);
    if (scripted >= 0) {
      const [limit] = this.scripted429.splice(scripted, 1);
      // [rate-limits]: HTTP 429 with Retry-After in seconds.
      return answer(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(limit!.retryAfter) });
    }
    if (method === 'apps.connections.open') {
      // [connections.open]: the app-level token, in the Authorization header only.
      if (bearer !== this.appToken) return answer(200, { ok: false, error: bearer === undefined ? 'not_authed' : 'invalid_auth' });
      const ticket = randomUUID();
      this.tickets.add(ticket);
      return answer(200, { ok: true, url: `ws://127.0.0.1:${this.port}/link/?ticket=${ticket}&app_id=${this.appId}` });
    }
    // [connections.open]: an app-level token is for that method only ([web-api] not_allowed_token_type).
    if (token === this.appToken) return answer(200, { ok: false, error: 'not_allowed_token_type' });
    if (token !== this.botToken) return answer(200, { ok: false, error: 'invalid_auth' });
    for (const fault of this.faults) {
      const what = fault(method, body);
      if (what === 'hang') return;
      if (what === 'hang-after') {
        if (method === 'chat.postMessage') this.postMessage(body);
        return;
      }
    }
    switch (method) {
      case 'auth.test':
        // [auth.test]: the workspace and the bot user; bot_id only for a bot token.
        return answer(200, { ok: true, url: 'https://homing-test.slack.com/', team: 'Homing Test', user: this.bot.name, team_id: this.teamId, user_id: this.bot.id, bot_id: this.bot.botId, is_enterprise_install: false });
      case 'chat.postMessage': {
        const channel = String(body.channel ?? '');
        const limited = this.spendPost(channel);
        if (limited !== undefined) return answer(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(limited) });
        const result = this.postMessage(body);
        return answer(200, result);
      }
      case 'users.conversations':
        return answer(200, this.usersConversations(body));
      case 'conversations.history':
      case 'conversations.replies': {
        const failure = this.historyFailures.shift();
        if (failure !== undefined) return answer(failure, { ok: false, error: 'service_unavailable' });
        return answer(200, method === 'conversations.history' ? this.history(body) : this.replies(body));
      }
      default:
        return answer(200, { ok: false, error: 'unknown_method' });
    }
  }

  private postMessage(body: Record<string, unknown>): Record<string, unknown> {
    const channelId = String(body.channel ?? '');
    const state = this.channels.get(channelId);
    // [postMessage] errors.
    if (!state) return { ok: false, error: 'channel_not_found' };
    if (state.refusal) return { ok: false, error: state.refusal };
    if (state.archived) return { ok: false, error: 'is_archived' };
    if (!state.members.has(this.bot.id)) return { ok: false, error: 'not_in_channel' };
    const text = typeof body.text === 'string' ? body.text : '';
    if (text.trim() === '') return { ok: false, error: 'no_text' };
    const threadTs = typeof body.thread_ts === 'string' && body.thread_ts !== '' ? body.thread_ts : undefined;
    const message = this.store(state, { user: this.bot.id, bot_id: this.bot.botId!, text: [...text].slice(0, MAX_TEXT).join(''), ...(threadTs ? { thread_ts: threadTs } : {}) });
    for (const listener of this.sendListeners) listener(message);
    this.announce(state, message);
    return { ok: true, channel: channelId, ts: message.ts, message: this.messagePayload(message, state) };
  }

  /** [rate-limits] chat.postMessage: a budget per channel; the seconds to wait once it is spent. */
  private spendPost(channel: string): number | undefined {
    const now = Date.now();
    const recent = (this.posts.get(channel) ?? []).filter((at) => now - at < this.postBucket.windowMs);
    if (recent.length >= this.postBucket.limit) {
      this.posts.set(channel, recent);
      return Math.max(1, Math.ceil((recent[0]! + this.postBucket.windowMs - now) / 1000));
    }
    recent.push(now);
    this.posts.set(channel, recent);
    return undefined;
  }

  private readable(channelId: string): { state: ChannelState } | { refusal: Record<string, unknown> } {
    const state = this.channels.get(channelId);
    if (!state) return { refusal: { ok: false, error: 'channel_not_found' } };
    if (!state.members.has(this.bot.id)) return { refusal: { ok: false, error: 'not_in_channel' } };
    return { state };
  }

  /** [users.conversations]: the conversations the bot is a member of, of the `types` asked (default public channels), paged by `cursor`. */
  private usersConversations(body: Record<string, unknown>): Record<string, unknown> {
    const types = String(body.types ?? 'public_channel').split(',');
    const limit = Math.min(999, Math.max(1, Number(body.limit ?? 100) || 100));
    const offset = typeof body.cursor === 'string' && body.cursor !== '' ? Number(Buffer.from(body.cursor, 'base64').toString('utf8').replace(/^offset:/, '')) : 0;
    if (!Number.isInteger(offset) || offset < 0) return { ok: false, error: 'invalid_cursor' };
    const all = [...this.channels.values()].filter((state) => state.members.has(this.bot.id) && types.includes(state.channel.kind === 'im' ? 'im' : 'public_channel'));
    const page = all.slice(offset, offset + limit);
    const more = offset + limit < all.length;
    return {
      ok: true,
      channels: page.map((state) =>
        state.channel.kind === 'im'
          ? { id: state.channel.id, created: 1712345678, is_im: true, is_org_shared: false, user: state.channel.user, is_user_deleted: false, priority: 0 }
          : { id: state.channel.id, name: state.channel.name, is_channel: true, is_private: false, is_archived: state.archived, is_member: true },
      ),
      response_metadata: { next_cursor: more ? Buffer.from(`offset:${offset + limit}`).toString('base64') : '' },
    };
  }

  /** [history]: top-level messages (and thread roots) in (oldest, latest), newest first; the cursor pages toward older ones. */
  private history(body: Record<string, unknown>): Record<string, unknown> {
    const readable = this.readable(String(body.channel ?? ''));
    if ('refusal' in readable) return readable.refusal;
    const state = readable.state;
    const { oldest, latest, limit } = range(body, 100);
    const cursorLatest = typeof body.cursor === 'string' && body.cursor !== '' ? decodeCursor(body.cursor) : undefined;
    if (body.cursor !== undefined && body.cursor !== '' && cursorLatest === undefined) return { ok: false, error: 'invalid_cursor' };
    const inclusive = body.inclusive === true || body.inclusive === 'true' || body.inclusive === '1';
    const top = state.messages.filter((message) => message.thread_ts === undefined || message.thread_ts === message.ts);
    const inRange = top
      .filter((message) => (inclusive ? compareTs(message.ts, oldest) >= 0 : compareTs(message.ts, oldest) > 0))
      .filter((message) => (latest === undefined ? true : inclusive ? compareTs(message.ts, latest) <= 0 : compareTs(message.ts, latest) < 0))
      .filter((message) => cursorLatest === undefined || compareTs(message.ts, cursorLatest) < 0)
      .reverse();
    const page = inRange.slice(0, limit);
    const hasMore = inRange.length > limit;
    for (const message of page) this.noteHanded(message.ts);
    return {
      ok: true,
      messages: page.map((message) => this.messagePayload(message, state, true)),
      has_more: hasMore,
      pin_count: 0,
      response_metadata: { next_cursor: hasMore ? encodeCursor(page.at(-1)!.ts) : '' },
    };
  }

  /** [replies]: the thread's root, then its replies after `oldest`, oldest first; the cursor pages forward. */
  private replies(body: Record<string, unknown>): Record<string, unknown> {
    const readable = this.readable(String(body.channel ?? ''));
    if ('refusal' in readable) return readable.refusal;
    const state = readable.state;
    const rootTs = String(body.ts ?? '');
    const root = state.messages.find((message) => message.ts === rootTs);
    if (!root) return { ok: false, error: 'thread_not_found' };
    const { oldest, limit } = range(body, 1000);
    const after = typeof body.cursor === 'string' && body.cursor !== '' ? decodeCursor(body.cursor) : undefined;
    if (body.cursor !== undefined && body.cursor !== '' && after === undefined) return { ok: false, error: 'invalid_cursor' };
    const replies = state.messages
      .filter((message) => message.thread_ts === rootTs && message.ts !== rootTs)
      .filter((message) => compareTs(message.ts, oldest) > 0 && (after === undefined || compareTs(message.ts, after) > 0));
    const page = [...(after === undefined ? [root] : []), ...replies].slice(0, limit);
    const hasMore = replies.length + (after === undefined ? 1 : 0) > limit;
    for (const message of page) this.noteHanded(message.ts);
    return {
      ok: true,
      messages: page.map((message) => this.messagePayload(message, state, true)),
      has_more: hasMore,
      response_metadata: { next_cursor: hasMore ? encodeCursor(page.at(-1)!.ts) : '' },
    };
  }

  /**
   * The files route (Files, above): the bytes to the bot token (with files:read), a
   * download for url_private_download; Slack's sign-in page (HTTP 200,
   * text/html) to any other request; 404 for a file deleted or unknown.
   */
  private onFileRequest(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = /^\/files-pri\/(T[A-Z0-9]+)-(F[A-Z0-9]+)\/(download\/)?([^/]+)$/.exec(url.pathname);
    const header = req.headers.authorization;
    const authorization = header === undefined ? 'none' : header === `Bearer ${this.botToken}` ? 'bot token' : 'other';
    const record = (status: number, served: FileDownload['served']) =>
      this.downloads.push({ path: url.pathname, fileId: match?.[2], status, served, authorization, at: Date.now() });
    const serve = () => {
      if (res.destroyed) return;
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        record(405, 'nothing');
        return void res.writeHead(405).end();
      }
      if (authorization !== 'bot token' || !this.filesRead) {
        record(200, 'sign-in page');
        return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(SIGN_IN_PAGE) }).end(req.method === 'HEAD' ? undefined : SIGN_IN_PAGE);
      }
      const file = match && match[1] === this.teamId ? this.files.get(match[2]!) : undefined;
      if (!file || this.deletedFiles.has(file.id) || match![4] !== encodeURIComponent(file.name)) {
        record(404, 'nothing');
        return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      }
      record(200, 'file');
      const download = match![3] !== undefined ? { 'content-disposition': `attachment; filename="${file.name.replace(/[^\x20-\x7e]|"/g, '_')}"` } : {};
      res.writeHead(200, { 'content-type': file.mimetype, 'content-length': file.bytes.length, ...download }).end(req.method === 'HEAD' ? undefined : file.bytes);
    };
    if (this.downloadHold.keep(serve)) record(0, 'nothing');
    else serve();
  }

  private reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.headersSent) return;
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers }).end(text);
  }

  // ---- Socket Mode -----------------------------------------------------

  private onUpgrade(wss: WebSocketServer, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://localhost');
    const ticket = url.searchParams.get('ticket') ?? '';
    // [connections.open]: each URL is good for one connection.
    if (url.pathname !== '/link/' || !this.tickets.delete(ticket)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws));
  }

  private onSocket(ws: WebSocket): void {
    ws.on('error', () => ws.terminate());
    this.sockets.add(ws);
    this.connectionsOpened += 1;
    const ping = setInterval(() => ws.ping(), this.pingIntervalMs);
    ping.unref();
    ws.on('close', () => {
      clearInterval(ping);
      this.sockets.delete(ws);
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let message: { envelope_id?: unknown };
      try {
        message = JSON.parse(String(data)) as { envelope_id?: unknown };
      } catch {
        return;
      }
      if (typeof message.envelope_id === 'string') this.onAck(message.envelope_id);
    });
    if (!this.sayHello) return;
    // [socket-mode]: hello first, with the number of connections the app has.
    ws.send(JSON.stringify({ type: 'hello', num_connections: this.sockets.size, debug_info: { host: 'applink-fake', build_number: 1, approximate_connection_time: 18060 }, connection_info: { app_id: this.appId } }));
    // Events owed and due while no connection was open go out on this one.
    for (const pending of this.pending.values()) if (!pending.acked && pending.timer === undefined && !this.holdEvents) this.deliver(pending);
  }

  private onAck(envelopeId: string): void {
    if (this.loseAcks) return;
    const pending = this.byEnvelope.get(envelopeId);
    if (!pending) return;
    this.acked.set(pending.eventId, (this.acked.get(pending.eventId) ?? 0) + 1);
    if (pending.envelopeId !== envelopeId || pending.acked) return;
    pending.acked = true;
    clearTimeout(pending.timer);
    pending.timer = undefined;
    this.pending.delete(pending.eventId);
  }

  /** [events]: a message event for the conversation's message (and an app_mention for a mention of the bot), if the bot is in it. */
  private announce(state: ChannelState, message: FakeSlackMessage): void {
    if (!state.members.has(this.bot.id)) return;
    const event = { ...this.messagePayload(message, state), channel: state.channel.id, event_ts: message.ts, channel_type: state.channel.kind === 'im' ? 'im' : 'channel' };
    this.queueEvent(event, message.ts);
    if (state.channel.kind !== 'im' && message.user !== this.bot.id && message.text.includes(`<@${this.bot.id}>`)) {
      this.queueEvent({ type: 'app_mention', user: message.user, text: message.text, ts: message.ts, channel: state.channel.id, event_ts: message.ts, ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}) }, undefined);
    }
  }

  private queueEvent(event: Record<string, unknown>, ts: string | undefined): void {
    const eventId = `Ev${slackId('').slice(0, 10)}`;
    const payload = {
      token: 'fakeVerificationToken',
      team_id: this.teamId,
      api_app_id: this.appId,
      event,
      type: 'event_callback',
      event_id: eventId,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [{ enterprise_id: null, team_id: this.teamId, user_id: this.bot.id, is_bot: true, is_enterprise_install: false }],
      is_ext_shared_channel: false,
      event_context: `4-${Buffer.from(eventId).toString('base64url')}`,
      ...(ts ? { _ts: ts } : {}),
    };
    const pending: Pending = { eventId, payload, attempt: 0, acked: false, timer: undefined, envelopeId: undefined };
    this.pending.set(eventId, pending);
    if (!this.holdEvents) this.deliver(pending);
  }

  /** Sends the event on one open connection; unacknowledged after ackTimeoutMs, it is sent again later, until the retries run out [retries]. */
  private deliver(pending: Pending): void {
    const socket = [...this.sockets][0];
    const { _ts: ts, ...payload } = pending.payload as Record<string, unknown> & { _ts?: string };
    if (socket) {
      const envelopeId = randomUUID();
      pending.envelopeId = envelopeId;
      this.byEnvelope.set(envelopeId, pending);
      const event = payload.event as { type?: string };
      this.envelopes.push({ eventId: pending.eventId, envelopeId, retryAttempt: pending.attempt, eventType: String(event.type), ...(ts ? { ts } : {}) });
      if (ts && event.type === 'message') this.noteHanded(ts);
      socket.send(
        JSON.stringify({
          envelope_id: envelopeId,
          payload,
          type: 'events_api',
          accepts_response_payload: false,
          retry_attempt: pending.attempt,
          retry_reason: pending.attempt === 0 ? '' : 'timeout',
        }),
      );
    }
    pending.timer = setTimeout(() => {
      pending.timer = undefined;
      if (pending.acked) return;
      const wait = this.retryDelaysMs[pending.attempt];
      if (wait === undefined) {
        this.pending.delete(pending.eventId);
        this.dropped.push(pending.eventId);
        return;
      }
      pending.attempt += 1;
      pending.timer = setTimeout(() => {
        pending.timer = undefined;
        if (!pending.acked) this.deliver(pending);
      }, wait);
      pending.timer.unref?.();
    }, this.ackTimeoutMs);
    pending.timer.unref?.();
  }

  // ---- plumbing --------------------------------------------------------

  private state(channelId: string): ChannelState {
    const state = this.channels.get(channelId);
    if (!state) throw new Error(`the fake Slack has no channel ${channelId}`);
    return state;
  }

  private store(state: ChannelState, fields: Omit<FakeSlackMessage, 'channel' | 'ts' | 'at'>): FakeSlackMessage {
    const message: FakeSlackMessage = { channel: state.channel.id, ts: this.nextTs(), at: Date.now(), ...fields };
    state.messages.push(message);
    return message;
  }

  /** [events] message event / history item shape; thread roots carry reply_count and latest_reply. */
  private messagePayload(message: FakeSlackMessage, state: ChannelState, inHistory = false): Record<string, unknown> {
    const replies = state.messages.filter((other) => other.thread_ts === message.ts && other.ts !== message.ts);
    const user = this.users.get(message.user);
    return {
      type: 'message',
      user: message.user,
      text: message.text,
      ts: message.ts,
      team: this.teamId,
      ...(message.bot_id ? { bot_id: message.bot_id, app_id: this.appId } : { client_msg_id: randomUUID() }),
      ...(message.files ? { subtype: 'file_share', files: message.files.map((file) => this.filePayload(file, state)), upload: true, display_as_bot: false } : {}),
      ...(message.thread_ts ? { thread_ts: message.thread_ts } : replies.length > 0 ? { thread_ts: message.ts } : {}),
      ...(replies.length > 0 ? { reply_count: replies.length, latest_reply: replies.at(-1)!.ts, reply_users: [...new Set(replies.map((reply) => reply.user))] } : {}),
      ...(!inHistory && user && !message.bot_id ? { user_profile: { display_name: user.name, real_name: user.name } } : {}),
    };
  }

  private addFile(input: FakeSlackFileInput, from: FakeSlackUser): FakeSlackFile {
    const file: FakeSlackFile = {
      id: slackId('F'),
      name: input.name,
      mimetype: input.mime,
      filetype: /\.([a-z0-9]{1,8})$/i.exec(input.name)?.[1]?.toLowerCase() ?? 'binary',
      bytes: Buffer.from(input.bytes),
      user: from.id,
      created: Math.floor(Date.now() / 1000),
      ...(input.audioClip ? { audioClip: input.audioClip } : {}),
    };
    this.files.set(file.id, file);
    return file;
  }

  /** A file object as a message carries it; a deleted one as a tombstone (Files, above). */
  private filePayload(file: FakeSlackFile, state: ChannelState): Record<string, unknown> {
    if (this.deletedFiles.has(file.id)) return { id: file.id, mode: 'tombstone' };
    return {
      id: file.id,
      created: file.created,
      timestamp: file.created,
      name: file.name,
      title: file.name,
      mimetype: file.mimetype,
      filetype: file.filetype,
      pretty_type: file.filetype.toUpperCase(),
      user: file.user,
      user_team: this.teamId,
      editable: false,
      size: file.bytes.length,
      mode: 'hosted',
      is_external: false,
      external_type: '',
      is_public: state.channel.kind !== 'im',
      public_url_shared: false,
      display_as_bot: false,
      username: '',
      url_private: this.fileUrl(file, false),
      url_private_download: this.fileUrl(file, true),
      ...(file.audioClip ? { subtype: 'slack_audio', media_display_type: 'audio', duration_ms: file.audioClip.durationMs } : {}),
      permalink: `https://homing-test.slack.com/files/${file.user}/${file.id}/${encodeURIComponent(file.name)}`,
      has_rich_preview: false,
      file_access: 'visible',
    };
  }

  private nextTs(): string {
    const now = BigInt(Date.now()) * 1000n;
    this.lastTsMicros = now > this.lastTsMicros ? now : this.lastTsMicros + 1n;
    return tsOf(this.lastTsMicros);
  }

  private noteHanded(ts: string): void {
    const times = this.handed.get(ts) ?? [];
    times.push(Date.now());
    this.handed.set(ts, times);
  }
}

/** What Slack answers a file request it does not accept the token for (Files, above: the gist's comments); its text is the fake's. */
const SIGN_IN_PAGE = '<!DOCTYPE html><html lang="en-US"><head><title>Slack</title></head><body><h1>Sign in to Homing Test</h1><form action="/signin" method="post"><input type="email" name="email"><button>Sign in</button></form></body></html>';

/** Orders two Slack timestamps: seconds, then the six-digit fraction. */
export function compareTs(a: string, b: string): number {
  const [aSec = '', aFrac = ''] = a.split('.');
  const [bSec = '', bFrac = ''] = b.split('.');
  if (aSec.length !== bSec.length) return aSec.length - bSec.length;
  if (aSec !== bSec) return aSec < bSec ? -1 : 1;
  return aFrac < bFrac ? -1 : aFrac > bFrac ? 1 : 0;
}

/** [formatting]: the three characters Slack escapes in message text. */
export function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** An id in Slack's format: a type letter and upper-case letters and digits (`U0…`, `C0…`, `D0…`) [ids]. */
function slackId(prefix: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  let id = `${prefix}0`;
  for (let i = 0; i < 9; i++) id += alphabet[Math.floor(Math.random() * alphabet.length)];
  return id;
}

function tsOf(micros: bigint): string {
  return `${micros / 1_000_000n}.${String(micros % 1_000_000n).padStart(6, '0')}`;
}

function encodeCursor(ts: string): string {
  return Buffer.from(`ts:${ts}`).toString('base64');
}

function decodeCursor(cursor: string): string | undefined {
  const text = Buffer.from(cursor, 'base64').toString('utf8');
  return /^ts:\d+\.\d{6}$/.test(text) ? text.slice(3) : undefined;
}

/** `oldest` (default 0), `latest` and `limit` (default, at most 999 [history]). */
function range(body: Record<string, unknown>, fallbackLimit: number): { oldest: string; latest: string | undefined; limit: number } {
  const ts = (value: unknown) => (typeof value === 'string' && /^\d+(\.\d{1,6})?$/.test(value) ? normalTs(value) : typeof value === 'number' ? normalTs(String(value)) : undefined);
  const limit = Number(body.limit ?? fallbackLimit);
  return { oldest: ts(body.oldest) ?? '0.000000', latest: ts(body.latest), limit: Number.isInteger(limit) && limit > 0 ? Math.min(limit, 999) : fallbackLimit };
}

function normalTs(value: string): string {
  const [seconds = '0', fraction = ''] = value.split('.');
  return `${seconds}.${fraction.padEnd(6, '0').slice(0, 6)}`;
}

/** [web-api]: `application/x-www-form-urlencoded` or `application/json`; a GET's query. */
function parseBody(contentType: string | undefined, text: string, query: URLSearchParams): Record<string, unknown> | undefined {
  const fields: Record<string, unknown> = Object.fromEntries(query);
  if (text === '') return fields;
  if (contentType?.includes('application/json')) {
    try {
      const parsed = JSON.parse(text) as unknown;
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? { ...fields, ...(parsed as Record<string, unknown>) } : undefined;
    } catch {
      return undefined;
    }
  }
  return { ...fields, ...Object.fromEntries(new URLSearchParams(text)) };
}
