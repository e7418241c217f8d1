import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DownloadHold } from './download-hold';

/**
 * A Matrix homeserver (client-server API v3) on 127.0.0.1, written from the
 * facts in PLATFORMS.md (copied to test/fixtures/matrix-client-server-api.md,
 * which fake-matrix.test.ts checks this against) and from how Synapse behaves.
 * It speaks the real wire format — `Authorization: Bearer`, JSON bodies,
 * errors as `{errcode, error}` with Synapse's status codes — and is no kinder
 * than Synapse:
 * - `POST /login` (m.login.password) keeps a device per `device_id`: logging in
 *   again with the same id is the same device; without one a new device is made;
 * - `GET /sync` with `since` / `timeout` (long poll) / `filter` (timeline limit)
 *   and `next_batch`; an initial sync gives each joined room's state and only
 *   the last events of its timeline; an incremental one gives every event after
 *   `since` (up to the limit, else `limited: true`), invites with their
 *   `invite_state`, and account data (`m.direct`);
 * - `PUT /rooms/{room}/send/{type}/{txnId}`: the same txnId on the same path from
 *   the same device answers the first `event_id` and posts nothing (Synapse keeps
 *   this mapping in its `event_txn_id` table for 24 h, so it survives a server
 *   restart; see `restart()`); a device's own events come back in its sync with
 *   `unsigned.transaction_id`, and only to that device;
 * - errors: `429 M_LIMIT_EXCEEDED` with `retry_after_ms` and `Retry-After` while a
 *   throttle holds, `413 M_TOO_LARGE` past 65 536 bytes of canonical JSON for the
 *   whole event, `403 M_FORBIDDEN` outside a room or below its power level,
 *   `401 M_UNKNOWN_TOKEN` for a revoked token;
 * - `join`, `leave`, `typing`, `account/whoami`, `rooms/{room}/messages`;
 * - media (`upload`, `userSendsFile`): served at the authenticated
 *   `GET /_matrix/client/v1/media/download/{serverName}/{mediaId}` (spec v1.11,
 *   MSC3916), which needs the token as every client call does, and at the
 *   deprecated unauthenticated `GET /_matrix/media/v3/download/…`, as Synapse
 *   serves both; `authenticatedMedia = false` plays a server older than v1.11.
 * Tests script the people (`userSays`), the rooms and the faults, and read what
 * the bot posted (`postedBy`) and downloaded (`downloads`).
 * Sources, cited per behaviour below: "spec" is the Matrix spec (matrix-org/matrix-spec:
 * content/client-server-api/_index.md by section, data/api/client-server/*.yaml by endpoint),
 * "Synapse" is element-hq/synapse by file and function.
 */

export const SERVER_NAME = 'homing.test';
/** The limit on a whole event as canonical JSON: spec "Size limits"; Synapse api/constants.py MAX_PDU_SIZE, event_auth.py `_check_size_limits`. */
export const MAX_EVENT_BYTES = 65_536;
// Not Synapse's (api/constants.py MAX_REQUEST_SIZE = 200 × MAX_PDU_SIZE, answered 413 M_TOO_LARGE by http/site.py): a smaller cap, chosen for the fake.
const MAX_BODY = 1 << 20;
/** Synapse's default timeline limit for a sync without a filter: api/filtering.py `Filter.__init__` (`filter_json.get("limit", 10)`). */
const DEFAULT_TIMELINE_LIMIT = 10;
// Not documented: spec sync.yaml `timeout` has no maximum and Synapse (rest/client/sync.py) caps none; chosen so a stray long poll ends.
const MAX_LONG_POLL_MS = 60_000;

export interface MatrixEvent {
  readonly event_id: string;
  readonly type: string;
  readonly sender: string;
  readonly origin_server_ts: number;
  readonly content: Record<string, unknown>;
  readonly state_key?: string;
  readonly room_id: string;
}

interface StoredEvent {
  readonly event: MatrixEvent;
  /** Stream position: the sync token after it is `s<position>`. */
  readonly position: number;
  /** The device that sent it and its txnId (for the echo), if a client sent it. */
  readonly device?: { readonly userId: string; readonly deviceId: string; readonly txnId: string };
}

interface Room {
  readonly id: string;
  readonly events: StoredEvent[];
  /** Users whose `m.room.member` is `join` / `invite`. */
  readonly joined: Set<string>;
  readonly invited: Set<string>;
  /** Users who may not send messages (a power level below the room's events_default). */
  readonly muted: Set<string>;
}

interface User {
  readonly userId: string;
  readonly password: string;
  readonly displayName: string;
  readonly devices: Set<string>;
  /** Account data (`m.direct`), with the stream position it changed at. */
  accountData: Map<string, { content: Record<string, unknown>; position: number }>;
}

interface Token {
  readonly userId: string;
  readonly deviceId: string;
  revoked: boolean;
}

export interface PostedMessage {
  readonly roomId: string;
  readonly eventId: string;
  readonly sender: string;
  readonly deviceId: string | undefined;
  readonly txnId: string | undefined;
  readonly content: Record<string, unknown>;
  readonly body: string;
  readonly at: number;
}

export interface RequestRecord {
  readonly method: string;
  /** The path without the query, e.g. `/_matrix/client/v3/sync`. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly body: unknown;
  readonly userId: string | undefined;
  readonly at: number;
}

/** A file in the media repository (`upload`). */
interface StoredMedia {
  readonly bytes: Buffer;
  readonly contentType: string;
  readonly name: string | undefined;
}

/** One download the fake took (`FakeMatrix.downloads`), whatever was answered. */
export interface MediaDownloadRecord {
  /** `v1`: the authenticated client route; `v3`: the deprecated unauthenticated one. */
  readonly route: 'v1' | 'v3';
  readonly mediaId: string;
  /** The user whose valid token came with it, if any. */
  readonly userId: string | undefined;
  readonly at: number;
}

/** A media message as a person's client (Element) sends it: `userSendsFile`. */
export interface FileToSend {
  readonly msgtype: 'm.image' | 'm.file' | 'm.audio' | 'm.video';
  readonly bytes: Buffer;
  readonly mime: string;
  readonly name: string;
  /** Sent as the body, with `filename` beside it (spec v1.10 media captions, MSC2530). */
  readonly caption?: string;
  /** An `m.audio` recorded as a voice message (MSC3245), with its length. */
  readonly voice?: { readonly durationMs: number };
  readonly mentions?: string[];
  /** Fields added to (or replacing) the content: another client, a hostile one. */
  readonly extra?: Record<string, unknown>;
}

/** A scripted answer for one request: return it to answer instead of the fake's own logic, or undefined to pass. */
export type Fault = (request: RequestRecord) => FaultAnswer | undefined;
export type FaultAnswer =
  | { readonly kind: 'error'; readonly status: number; readonly errcode: string; readonly error?: string; readonly retryAfterMs?: number; readonly retryAfterHeader?: number }
  /** Takes the request and never answers (a dead network path). */
  | { readonly kind: 'hang' }
  /** Runs the request, then drops the connection before the answer: the event was sent, the client does not know. */
  | { readonly kind: 'drop-after' }
  /** Runs the request and never answers: the event was sent, the client is left waiting. */
  | { readonly kind: 'hang-after' }
  /** Anything at all as the body (hostile server tests). */
  | { readonly kind: 'raw'; readonly status: number; readonly body: string };

interface Poll {
  readonly userId: string;
  readonly wake: () => void;
}

class MatrixError extends Error {
  constructor(
    readonly status: number,
    readonly errcode: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export class FakeMatrix {
  private server: Server | undefined;
  private port = 0;
  private position = 0;
  private readonly rooms = new Map<string, Room>();
  private readonly users = new Map<string, User>();
  private readonly tokens = new Map<string, Token>();
  /** `${userId}|${deviceId}|${path}` → the first event_id and when (Synapse's event_txn_id table). */
  private readonly txnIds = new Map<string, { eventId: string; at: number }>();
  /** How long a txnId is remembered: Synapse deletes `event_txn_id_device_id` rows older than 24 h (see `forgetTxnIds`). */
  txnIdWindowMs = 24 * 3600 * 1000;
  /** The software the federation version endpoint names (a test may play another homeserver). */
  serverSoftware = 'Synapse';
  private readonly polls = new Set<Poll>();
  private readonly faults: Fault[] = [];
  /** User id (or 'all') → until when (ms) sends answer 429. */
  private readonly throttles = new Map<string, number>();
  /**
   * Whether a 429 carries `retry_after_ms` in the body, the `Retry-After` header, or both: spec "Rate limiting" (header
   * SHOULD since v1.10, `retry_after_ms` deprecated); Synapse sends both since 1.103 (docs/changelogs/CHANGES-2024.md, MSC4041).
   */
  retryAfterStyle: 'both' | 'body' | 'header' = 'both';
  readonly requests: RequestRecord[] = [];
  /** Every message event posted by anyone, in order (edits and notices included). */
  readonly posted: PostedMessage[] = [];
  readonly typing: { readonly roomId: string; readonly userId: string; readonly typing: boolean; readonly at: number }[] = [];
  /** Every 429 given, with when. */
  readonly throttled: number[] = [];
  private readonly postListeners = new Set<(message: PostedMessage) => void>();
  /** How many `restart()`s there were. */
  restarts = 0;
  /** media id → the file. */
  private readonly media = new Map<string, StoredMedia>();
  /**
   * Whether the server has the authenticated media endpoints (spec v1.11). False
   * plays an older server: the v1 route is an unknown path, `404 M_UNRECOGNIZED`.
   */
  authenticatedMedia = true;
  /** Every download the server took (on the v1 route: with a valid token), in order, held ones included. */
  readonly downloads: MediaDownloadRecord[] = [];
  /** Downloads waiting for `holdDownloads`'s release, when it holds. */
  private readonly downloadHold = new DownloadHold();

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(port = 0): Promise<void> {
    const server = createServer((req, res) => void this.onRequest(req, res));
    server.on('clientError', (_error, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Stops listening and drops every connection (long polls included); the server's state is kept for `start`. */
  async stop(): Promise<void> {
    for (const poll of [...this.polls]) poll.wake();
    this.polls.clear();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * The homeserver restarted: every connection dropped, nothing answers for
   * `downMs`, then it listens on the same port with everything it had stored —
   * rooms, devices, tokens and the txnId → event mapping (Synapse persists that in
   * `event_txn_id` and keeps it 24 h; its in-memory response cache is lost, but a
   * resend is still answered with the first event_id from the table).
   */
  async restart(downMs = 0): Promise<void> {
    const port = this.port;
    await this.stop();
    this.restarts++;
    if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
    await this.start(port);
  }

  // ---- scripting -------------------------------------------------------

  addUser(localpart: string, options: { password?: string; displayName?: string } = {}): string {
    const userId = `@${localpart}:${SERVER_NAME}`;
    this.users.set(userId, {
      userId,
      password: options.password ?? `${localpart}-password`,
      displayName: options.displayName ?? localpart,
      devices: new Set(),
      accountData: new Map(),
    });
    return userId;
  }

  /** An access token for a user, as an admin or another client would make one (a new device unless one is named). */
  // Token form `syt_<base64 localpart>_<random>`: Synapse handlers/auth.py `generate_access_token` (which adds a `_<crc>`).
  issueToken(userId: string, deviceId = newDeviceId()): string {
    const user = this.user(userId);
    user.devices.add(deviceId);
    const token = `syt_${Buffer.from(userId).toString('base64url')}_${randomBytes(12).toString('base64url')}`;
    this.tokens.set(token, { userId, deviceId, revoked: false });
    return token;
  }

  /** Every token of the user stops working (a password change, an admin's logout): 401 M_UNKNOWN_TOKEN (spec "Using access tokens"). */
  revokeTokens(userId: string): void {
    for (const token of this.tokens.values()) if (token.userId === userId) token.revoked = true;
    for (const poll of [...this.polls]) if (poll.userId === userId) poll.wake();
  }

  devicesOf(userId: string): string[] {
    return [...this.user(userId).devices];
  }

  /**
   * A room made by `creator`, with the others invited (or already joined with
   * `join`). `direct` marks it as a DM in the creator's `m.direct` and in the
   * invite (`is_direct`), as Element does; `encrypted` adds `m.room.encryption`.
   */
  createRoom(creator: string, options: { name?: string; invite?: string[]; join?: string[]; direct?: boolean; encrypted?: boolean } = {}): string {
    // `!<18 letters>:<server>`: Synapse handlers/room.py `_generate_room_id` (random_string(18)).
    const id = `!${randomBytes(12).toString('base64url').replace(/[^A-Za-z]/g, 'x').slice(0, 18)}:${SERVER_NAME}`;
    const room: Room = { id, events: [], joined: new Set(), invited: new Set(), muted: new Set() };
    this.rooms.set(id, room);
    // Room version 10 with `creator` in the content (spec rooms/v10; v11, Synapse's DEFAULT_ROOM_VERSION in config/server.py, drops `creator`).
    this.append(room, creator, 'm.room.create', { creator, room_version: '10' }, '');
    this.setMembership(room, creator, creator, 'join');
    // The creator at 100, everyone may post (events_default 0): spec m.room.power_levels; Synapse handlers/room.py's default power levels.
    this.append(room, creator, 'm.room.power_levels', { users: { [creator]: 100 }, events_default: 0 }, '');
    if (options.name !== undefined) this.append(room, creator, 'm.room.name', { name: options.name }, '');
    // spec modules/end_to_end_encryption.md, m.room.encryption (`m.megolm.v1.aes-sha2`).
    if (options.encrypted) this.append(room, creator, 'm.room.encryption', { algorithm: 'm.megolm.v1.aes-sha2' }, '');
    for (const userId of options.join ?? []) this.setMembership(room, userId, userId, 'join');
    // A DM: `is_direct` on the invite and the room in the inviter's `m.direct`: spec modules/dm.md "Direct Messaging".
    for (const userId of options.invite ?? []) this.setMembership(room, creator, userId, 'invite', options.direct ? { is_direct: true } : {});
    if (options.direct) {
      const other = [...(options.invite ?? []), ...(options.join ?? [])][0];
      if (other) this.addDirect(creator, other, id);
    }
    this.wakeAll();
    return id;
  }

  join(userId: string, roomId: string): void {
    this.setMembership(this.room(roomId), userId, userId, 'join');
    this.wakeAll();
  }

  invite(inviter: string, userId: string, roomId: string, options: { direct?: boolean } = {}): void {
    this.setMembership(this.room(roomId), inviter, userId, 'invite', options.direct ? { is_direct: true } : {});
    this.wakeAll();
  }

  /** Someone leaves, or is kicked by `by`. */
  leave(userId: string, roomId: string, by = userId): void {
    this.setMembership(this.room(roomId), by, userId, 'leave');
    this.wakeAll();
  }

  /** Takes away (or gives back) a user's right to post in the room: sends answer `403 M_FORBIDDEN` (Synapse event_auth.py `_can_send_event`). */
  mute(userId: string, roomId: string, muted = true): void {
    const room = this.room(roomId);
    if (muted) room.muted.add(userId);
    else room.muted.delete(userId);
  }

  encrypt(by: string, roomId: string): void {
    this.append(this.room(roomId), by, 'm.room.encryption', { algorithm: 'm.megolm.v1.aes-sha2' }, '');
    this.wakeAll();
  }

  /**
   * A person writes in a room, as their client would post it. `threadRoot` puts it in a
   * thread, `replyTo` makes it a reply (with Element's fallback quote in the body).
   */
  userSays(
    from: string,
    roomId: string,
    body: string,
    options: { threadRoot?: string; replyTo?: string; msgtype?: string; mentions?: string[]; extra?: Record<string, unknown> } = {},
  ): MatrixEvent {
    // `extra` may replace the mentions: a client other than Element.
    const content: Record<string, unknown> = {
      msgtype: options.msgtype ?? 'm.text',
      body,
      'm.mentions': this.elementMentions(from, roomId, options.mentions ?? [], options.replyTo),
      ...options.extra,
    };
    // A thread message, with the reply fallback (`is_falling_back`, `m.in_reply_to` the thread's latest event) for
    // unthreaded clients: spec modules/threading.md "Fallback for unthreaded clients" and "Replies within threads".
    if (options.threadRoot) {
      content['m.relates_to'] = {
        rel_type: 'm.thread',
        event_id: options.threadRoot,
        is_falling_back: options.replyTo === undefined,
        'm.in_reply_to': { event_id: options.replyTo ?? this.latestInThread(roomId, options.threadRoot) },
      };
    } else if (options.replyTo) {
      // `m.in_reply_to`: spec modules/rich_replies.md. The `> <@sender> …` quote is the fallback older spec versions
      // required and the current one says clients must strip ("In previous versions of the specification…").
      const quoted = this.event(roomId, options.replyTo);
      const quote = typeof quoted?.content.body === 'string' ? quoted.content.body.split('\n').map((line, i) => (i === 0 ? `> <${quoted.sender}> ${line}` : `> ${line}`)) : [];
      content.body = `${quote.join('\n')}\n\n${body}`;
      content['m.relates_to'] = { 'm.in_reply_to': { event_id: options.replyTo } };
    }
    return this.post(this.room(roomId), from, 'm.room.message', content);
  }

  /**
   * `m.mentions` as Element sets it (element-web, SendMessageComposer.tsx
   * `attachMentions`): always present, to turn off the legacy push rules; a reply
   * mentions the replied-to event's sender, then the pills typed; never the
   * sender. The spec's rich replies section ("Mentioning the replied to user")
   * allows the replied-to sender and, since v1.16, says not to pass on the users
   * that event mentioned (older Element, matrix-react-sdk, still did).
   */
  private elementMentions(from: string, roomId: string, typed: readonly string[], replyTo: string | undefined): Record<string, unknown> {
    const users = new Set<string>();
    const repliedTo = replyTo === undefined ? undefined : this.event(roomId, replyTo);
    if (repliedTo) users.add(repliedTo.sender);
    for (const id of typed) users.add(id);
    users.delete(from);
    return users.size > 0 ? { user_ids: [...users] } : {};
  }

  /** An edit (`m.replace`) of an earlier message: spec modules/event_replacements.md (`* ` body, `m.new_content`). */
  userEdits(from: string, roomId: string, original: string, newBody: string): MatrixEvent {
    return this.post(this.room(roomId), from, 'm.room.message', {
      msgtype: 'm.text',
      body: `* ${newBody}`,
      'm.new_content': { msgtype: 'm.text', body: newBody },
      'm.relates_to': { rel_type: 'm.replace', event_id: original },
    });
  }

  // `redacts` in the content is room v11's form (spec rooms/v11.md, "Moving the `redacts` property"); in the fake's v10 rooms it is top-level.
  userRedacts(from: string, roomId: string, eventId: string): MatrixEvent {
    return this.post(this.room(roomId), from, 'm.room.redaction', { redacts: eventId, reason: 'removed' }, eventId);
  }

  /** An encrypted message, as a client with E2EE posts it (the content is opaque to the server; fields: spec end_to_end_encryption.md, m.room.encrypted megolm). */
  userSaysEncrypted(from: string, roomId: string): MatrixEvent {
    return this.post(this.room(roomId), from, 'm.room.encrypted', {
      algorithm: 'm.megolm.v1.aes-sha2',
      ciphertext: randomBytes(48).toString('base64'),
      device_id: 'ELEMENTDEV',
      sender_key: randomBytes(32).toString('base64'),
      session_id: randomBytes(32).toString('base64'),
    });
  }

  /** Adds a room to a user's `m.direct` account data (spec modules/dm.md: user id → room ids), delivered in sync `account_data`. */
  addDirect(userId: string, other: string, roomId: string): void {
    const user = this.user(userId);
    const current = (user.accountData.get('m.direct')?.content ?? {}) as Record<string, string[]>;
    const list = current[other] ?? [];
    this.position++;
    user.accountData.set('m.direct', { content: { ...current, [other]: [...list, roomId] }, position: this.position });
    this.wakeAll();
  }

  /** From now until `ms` later, sends (and logins) by `userId` (or anyone: 'all') answer 429 M_LIMIT_EXCEEDED (spec "Rate limiting"). */
  throttle(ms: number, userId: string | 'all' = 'all'): void {
    this.throttles.set(userId, Date.now() + ms);
  }

  /**
   * The next `/rooms/{room}/messages` fails once with a 502, as a homeserver
   * behind a reverse proxy does when Synapse restarts or a worker times out
   * (nginx answers `502 Bad Gateway` with its own HTML page, not Matrix JSON).
   * Source: not checked against nginx's source; the page is nginx's familiar default error page.
   */
  failNextMessages(): void {
    const remove = this.fault((request) => {
      if (request.method !== 'GET' || !/^\/_matrix\/client\/v3\/rooms\/[^/]+\/messages$/.test(request.path)) return undefined;
      remove();
      return { kind: 'raw', status: 502, body: '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>' };
    });
  }

  /**
   * The txnIds seen so far are forgotten, as Synapse forgets them a day later:
   * `EventsWorkerStore._cleanup_old_transaction_ids` (synapse/storage/databases/
   * main/events_worker.py) runs every 5 minutes and deletes the
   * `event_txn_id_device_id` rows whose `inserted_ts` is older than 24 hours.
   * A resend with an old txnId then posts a new event.
   */
  forgetTxnIds(): void {
    this.txnIds.clear();
  }

  /**
   * A file in the media repository, as `POST /_matrix/media/v3/upload` would
   * store it (`content_uri` in the answer); returns its `mxc://` URI. The media
   * id is a random URL-safe string of 24 characters, as Synapse makes them
   * (docs/media_repository.rst: "a randomly chosen, URL safe 24 character string").
   */
  upload(bytes: Buffer, contentType: string, name?: string): string {
    const mediaId = randomBytes(18).toString('base64url');
    this.media.set(mediaId, { bytes, contentType, name });
    return `mxc://${SERVER_NAME}/${mediaId}`;
  }

  /** The file is gone from the repository (an admin's purge, a retention policy): downloads answer 404 M_NOT_FOUND. */
  deleteMedia(mxc: string): void {
    this.media.delete(mxc.slice(mxc.lastIndexOf('/') + 1));
  }

  /**
   * A person sends a file: uploaded, then posted as Element does it
   * (matrix-react-sdk ContentMessages.ts: `body` the file name, `info` with
   * `mimetype` and `size`, `url` the mxc URI; with a caption, `filename` is the
   * name and `body` the caption, spec v1.10 "Media captions"). A voice message
   * is an `m.audio` as Element's voice recorder sends it (MSC3245:
   * `org.matrix.msc3245.voice: {}`, `org.matrix.msc1767.audio` with `duration`
   * in ms and a `waveform`, body "Voice message").
   */
  userSendsFile(from: string, roomId: string, file: FileToSend): MatrixEvent {
    const url = this.upload(file.bytes, file.mime, file.name);
    const info: Record<string, unknown> = { mimetype: file.mime, size: file.bytes.length, ...(file.voice ? { duration: file.voice.durationMs } : {}) };
    const content: Record<string, unknown> = {
      msgtype: file.msgtype,
      body: file.caption ?? (file.voice ? 'Voice message' : file.name),
      ...(file.caption !== undefined ? { filename: file.name } : {}),
      info,
      url,
      'm.mentions': this.elementMentions(from, roomId, file.mentions ?? [], undefined),
      ...(file.voice
        ? {
            'org.matrix.msc1767.text': 'Voice message',
            'org.matrix.msc1767.audio': { duration: file.voice.durationMs, waveform: [0, 512, 1024, 512, 0] },
            'org.matrix.msc3245.voice': {},
          }
        : {}),
      ...file.extra,
    };
    return this.post(this.room(roomId), from, 'm.room.message', content);
  }

  /**
   * From now on downloads hang: the request is taken and nothing answered, until
   * the returned function is called (then those still connected are served).
   */
  holdDownloads(): () => void {
    return this.downloadHold.hold();
  }

  /** Adds a fault; returns a function that removes it. */
  fault(fault: Fault): () => void {
    this.faults.push(fault);
    return () => {
      const index = this.faults.indexOf(fault);
      if (index >= 0) this.faults.splice(index, 1);
    };
  }

  onPost(listener: (message: PostedMessage) => void): () => void {
    this.postListeners.add(listener);
    return () => this.postListeners.delete(listener);
  }

  /** The message events `sender` posted in the room (what the people there see), in order. */
  postedBy(sender: string, roomId?: string): PostedMessage[] {
    return this.posted.filter((message) => message.sender === sender && (roomId === undefined || message.roomId === roomId));
  }

  /** The `next_batch` a sync would answer now: past every event the server holds. Tokens are opaque (spec "Syncing"); `s<n>` mimics Synapse's StreamToken (types/__init__.py). */
  syncToken(): string {
    return `s${this.position}`;
  }

  /** Whether a long poll of this user is open now. */
  isPolling(userId: string): boolean {
    return [...this.polls].some((poll) => poll.userId === userId);
  }

  membership(userId: string, roomId: string): 'join' | 'invite' | 'leave' {
    const room = this.room(roomId);
    return room.joined.has(userId) ? 'join' : room.invited.has(userId) ? 'invite' : 'leave';
  }

  event(roomId: string, eventId: string): MatrixEvent | undefined {
    return this.rooms.get(roomId)?.events.find((stored) => stored.event.event_id === eventId)?.event;
  }

  // ---- the room model --------------------------------------------------

  private user(userId: string): User {
    const user = this.users.get(userId);
    if (!user) throw new Error(`no such user ${userId}`);
    return user;
  }

  private room(roomId: string): Room {
    const room = this.rooms.get(roomId);
    if (!room) throw new Error(`no such room ${roomId}`);
    return room;
  }

  // Every event gets the next stream position: sync and /messages order by arrival, as the spec's "Syncing" warning says.
  private append(room: Room, sender: string, type: string, content: Record<string, unknown>, stateKey: string | undefined, device?: StoredEvent['device']): MatrixEvent {
    this.position++;
    const event: MatrixEvent = {
      event_id: newEventId(),
      type,
      sender,
      origin_server_ts: Date.now(),
      content,
      room_id: room.id,
      ...(stateKey !== undefined ? { state_key: stateKey } : {}),
    };
    room.events.push({ event, position: this.position, ...(device ? { device } : {}) });
    return event;
  }

  private post(room: Room, sender: string, type: string, content: Record<string, unknown>, redacts?: string, device?: StoredEvent['device']): MatrixEvent {
    const event = this.append(room, sender, type, redacts ? { ...content } : content, undefined, device);
    if (type === 'm.room.message') {
      const message: PostedMessage = {
        roomId: room.id,
        eventId: event.event_id,
        sender,
        deviceId: device?.deviceId,
        txnId: device?.txnId,
        content,
        body: typeof content.body === 'string' ? content.body : '',
        at: event.origin_server_ts,
      };
      this.posted.push(message);
      for (const listener of this.postListeners) listener(message);
    }
    this.wakeAll();
    return event;
  }

  private setMembership(room: Room, sender: string, userId: string, membership: 'join' | 'invite' | 'leave', extra: Record<string, unknown> = {}): void {
    room.joined.delete(userId);
    room.invited.delete(userId);
    if (membership === 'join') room.joined.add(userId);
    if (membership === 'invite') room.invited.add(userId);
    // spec m.room.member: `membership` and `displayname` in the content, state_key the target user.
    const displayname = this.users.get(userId)?.displayName;
    this.append(room, sender, 'm.room.member', { membership, ...(displayname ? { displayname } : {}), ...extra }, userId);
  }

  // The thread fallback points at the thread's latest event: spec modules/threading.md "Fallback for unthreaded clients".
  private latestInThread(roomId: string, root: string): string {
    const events = this.room(roomId).events.filter((stored) => {
      const relation = stored.event.content['m.relates_to'] as { rel_type?: string; event_id?: string } | undefined;
      return stored.event.event_id === root || (relation?.rel_type === 'm.thread' && relation.event_id === root);
    });
    return events.at(-1)?.event.event_id ?? root;
  }

  private wakeAll(): void {
    for (const poll of [...this.polls]) poll.wake();
  }

  // ---- HTTP ------------------------------------------------------------

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.on('error', () => undefined);
    req.on('error', () => undefined);
    let raw: string;
    try {
      raw = await readBody(req);
    } catch {
      // Synapse http/site.py: 413 M_TOO_LARGE "Request content is too large (>N)" (the fake's text differs).
      this.answer(res, 413, { errcode: 'M_TOO_LARGE', error: 'Request body too large' });
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    let body: unknown = undefined;
    if (raw !== '') {
      try {
        body = JSON.parse(raw);
      } catch {
        // Synapse http/servlet.py `parse_json_value_from_request`: 400 M_NOT_JSON "Content not JSON.".
        this.answer(res, 400, { errcode: 'M_NOT_JSON', error: 'Content not JSON.' });
        return;
      }
    }
    // `Authorization: Bearer`: spec "Using access tokens". The `access_token` query parameter was removed in spec v1.20,
    // but Synapse api/auth/base.py `get_access_token_from_request` still takes it.
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? url.searchParams.get('access_token') ?? undefined;
    const auth = token !== undefined ? this.tokens.get(token) : undefined;
    const record: RequestRecord = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, body, userId: auth?.userId, at: Date.now() };
    this.requests.push(record);
    for (const fault of this.faults) {
      const answer = fault(record);
      if (!answer) continue;
      switch (answer.kind) {
        case 'error': {
          const headers: Record<string, string> = answer.retryAfterHeader !== undefined ? { 'retry-after': String(answer.retryAfterHeader) } : {};
          this.answer(res, answer.status, { errcode: answer.errcode, error: answer.error ?? answer.errcode, ...(answer.retryAfterMs !== undefined ? { retry_after_ms: answer.retryAfterMs } : {}) }, headers);
          return;
        }
        case 'hang':
          return;
        case 'raw':
          res.writeHead(answer.status, { 'content-type': 'application/json' });
          res.end(answer.body);
          return;
        case 'drop-after':
          await this.route(record, token, auth).catch(() => undefined);
          res.destroy();
          return;
        case 'hang-after':
          await this.route(record, token, auth).catch(() => undefined);
          return;
      }
    }
    const download = mediaDownloadPath(record.path);
    if (download && record.method === 'GET') {
      await this.serveMedia(download, token, auth, res);
      return;
    }
    try {
      const { status, body: answer } = await this.route(record, token, auth, res);
      this.answer(res, status, answer);
    } catch (error) {
      if (error instanceof MatrixError) this.answer(res, error.status, { errcode: error.errcode, error: error.message, ...error.extra }, error.headers);
      // Synapse http/server.py `return_json_error`: an unexpected exception is 500 M_UNKNOWN "Internal server error".
      else this.answer(res, 500, { errcode: 'M_UNKNOWN', error: 'Internal server error' });
    }
  }

  private answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.destroyed || res.headersSent) return;
    // Errors as `{errcode, error}` in JSON: spec "Standard error response".
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  private async route(request: RequestRecord, token: string | undefined, auth: Token | undefined, res?: ServerResponse): Promise<{ status: number; body: unknown }> {
    const path = request.path;
    const method = request.method;
    // spec versions.yaml, no token needed.
    if (method === 'GET' && path === '/_matrix/client/versions') return ok({ versions: ['v1.1', 'v1.5', 'v1.8', 'v1.11'], unstable_features: {} });
    // Synapse's FederationVersionServlet (synapse/federation/transport/server/federation.py), no token needed;
    // its default listener serves the client and federation APIs together.
    if (method === 'GET' && path === '/_matrix/federation/v1/version') return ok({ server: { name: this.serverSoftware, version: '1.139.0' } });
    // spec login.yaml GET; Synapse rest/client/login.py `on_GET` lists m.login.password and m.login.application_service,
    // m.login.token only with SSO or login-token enabled (the fake always lists it).
    if (method === 'GET' && path === '/_matrix/client/v3/login') return ok({ flows: [{ type: 'm.login.password' }, { type: 'm.login.token' }] });
    if (method === 'POST' && path === '/_matrix/client/v3/login') return ok(this.login(request.body));
    // Unknown path: 404 M_UNRECOGNIZED "Unrecognized request", Synapse http/server.py `_get_handler_for_request`
    // (spec "Common error codes": M_UNRECOGNIZED). Synapse answers 405 for a known path with the wrong method; the fake 404.
    if (!path.startsWith('/_matrix/client/v3/')) throw new MatrixError(404, 'M_UNRECOGNIZED', 'Unrecognized request');
    // Everything else needs a token: 401 M_MISSING_TOKEN / M_UNKNOWN_TOKEN (spec "Using access tokens"; Synapse
    // api/errors.py MissingClientTokenError, InvalidClientTokenError with `soft_logout`).
    if (token === undefined) throw new MatrixError(401, 'M_MISSING_TOKEN', 'Missing access token');
    if (!auth || auth.revoked) throw new MatrixError(401, 'M_UNKNOWN_TOKEN', 'Unrecognised access token', { soft_logout: false });
    const rest = path.slice('/_matrix/client/v3'.length);
    const parts = rest.split('/').map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part;
      }
    });
    // spec whoami.yaml; Synapse rest/client/account.py WhoamiRestServlet (`is_guest`).
    if (method === 'GET' && rest === '/account/whoami') return ok({ user_id: auth.userId, device_id: auth.deviceId, is_guest: false });
    if (method === 'GET' && rest === '/sync') return ok(await this.sync(auth, request.query, res));
    // spec logout.yaml: the token is invalidated and its device deleted.
    if (method === 'POST' && rest === '/logout') {
      this.tokens.delete(token);
      this.user(auth.userId).devices.delete(auth.deviceId);
      return ok({});
    }
    // spec list_joined_rooms.yaml.
    if (method === 'GET' && rest === '/joined_rooms') return ok({ joined_rooms: [...this.rooms.values()].filter((room) => room.joined.has(auth.userId)).map((room) => room.id) });
    // /join/{roomIdOrAlias}, /rooms/{roomId}/join (spec joining.yaml). Unknown room: 404 "No known servers", Synapse
    // handlers/room_member.py NoKnownServersError; not invited: 403 "You are not invited to this room.", event_auth.py.
    if (method === 'POST' && ((parts[1] === 'join' && parts.length === 3) || (parts[1] === 'rooms' && parts[3] === 'join' && parts.length === 4))) {
      const room = this.rooms.get(parts[1] === 'join' ? parts[2]! : parts[2]!);
      if (!room) throw new MatrixError(404, 'M_NOT_FOUND', 'No known servers');
      if (!room.joined.has(auth.userId) && !room.invited.has(auth.userId)) throw new MatrixError(403, 'M_FORBIDDEN', 'You are not invited to this room.');
      if (!room.joined.has(auth.userId)) this.setMembership(room, auth.userId, auth.userId, 'join');
      this.wakeAll();
      return ok({ room_id: room.id });
    }
    if (parts[1] !== 'rooms' || parts.length < 4) throw new MatrixError(404, 'M_UNRECOGNIZED', 'Unrecognized request');
    const room = this.rooms.get(parts[2]!);
    const action = parts[3];
    // spec leaving.yaml. The 404 for an unknown room is not checked against Synapse: chosen.
    if (method === 'POST' && action === 'leave' && parts.length === 4) {
      if (!room) throw new MatrixError(404, 'M_NOT_FOUND', 'Unknown room');
      if (room.joined.has(auth.userId) || room.invited.has(auth.userId)) this.setMembership(room, auth.userId, auth.userId, 'leave');
      this.wakeAll();
      return ok({});
    }
    if (method === 'PUT' && action === 'send' && parts.length === 6) return ok(this.send(auth, room, parts[2]!, parts[4]!, parts[5]!, request.body, path));
    // spec typing.yaml. Another user's state: Synapse handlers/typing.py `started_typing` AuthError(400, …), errcode M_FORBIDDEN;
    // not in the room: api/auth/base.py `check_user_in_room`, 403. A missing `typing` is 400 here (spec: required);
    // Synapse's RoomTypingRestServlet reads content["typing"] unchecked (a 500).
    if (method === 'PUT' && action === 'typing' && parts.length === 5) {
      if (parts[4] !== auth.userId) throw new MatrixError(400, 'M_FORBIDDEN', 'Cannot set another user\'s typing state');
      if (!room || !room.joined.has(auth.userId)) throw new MatrixError(403, 'M_FORBIDDEN', `User ${auth.userId} not in room ${parts[2]}`);
      const typing = (request.body as { typing?: unknown } | undefined)?.typing;
      if (typeof typing !== 'boolean') throw new MatrixError(400, 'M_BAD_JSON', 'Missing typing');
      this.typing.push({ roomId: room.id, userId: auth.userId, typing, at: Date.now() });
      return ok({});
    }
    if (method === 'GET' && action === 'messages' && parts.length === 4) return ok(this.messages(auth, room, request.query));
    throw new MatrixError(404, 'M_UNRECOGNIZED', 'Unrecognized request');
  }

  /**
   * A download. The v1 route needs a valid token like every client call (spec
   * v1.11 download: "requires authentication"; Synapse rest/client/media.py
   * `DownloadResource.on_GET` calls `auth.get_user_by_req`, so no token is
   * 401 M_MISSING_TOKEN and a bad one 401 M_UNKNOWN_TOKEN); the v3 route takes
   * none. An unknown media id is Synapse's `respond_404` (media/_base.py):
   * 404 M_NOT_FOUND (its text names the path; the fake's is shorter). The file is served with its type, length and
   * `Content-Disposition` (Synapse media/_base.py `add_file_headers`).
   */
  private async serveMedia(download: { route: 'v1' | 'v3'; serverName: string; mediaId: string }, token: string | undefined, auth: Token | undefined, res: ServerResponse): Promise<void> {
    const fail = (status: number, errcode: string, error: string) => this.answer(res, status, { errcode, error });
    if (download.route === 'v1') {
      // Unknown to a server older than v1.11: Synapse http/server.py `_get_handler_for_request`, 404 M_UNRECOGNIZED.
      if (!this.authenticatedMedia) return fail(404, 'M_UNRECOGNIZED', 'Unrecognized request');
      if (token === undefined) return fail(401, 'M_MISSING_TOKEN', 'Missing access token');
      if (!auth || auth.revoked) return fail(401, 'M_UNKNOWN_TOKEN', 'Unrecognised access token');
    }
    this.downloads.push({ route: download.route, mediaId: download.mediaId, userId: auth && !auth.revoked ? auth.userId : undefined, at: Date.now() });
    await this.downloadHold.wait(res);
    if (res.destroyed || res.writableEnded) return;
    const file = download.serverName === SERVER_NAME ? this.media.get(download.mediaId) : undefined;
    if (!file) return fail(404, 'M_NOT_FOUND', 'Not found');
    const disposition = file.name !== undefined ? `attachment; filename*=utf-8''${encodeURIComponent(file.name)}` : 'attachment';
    res.writeHead(200, {
      'content-type': file.contentType,
      'content-length': String(file.bytes.length),
      'content-disposition': disposition,
      // spec "Content repository": the recommended Content-Security-Policy on served content.
      'content-security-policy': "sandbox; default-src 'none'; script-src 'none'; plugin-types application/pdf; style-src 'unsafe-inline'; object-src 'self';",
    });
    res.end(file.bytes);
  }

  private login(body: unknown): Record<string, unknown> {
    const input = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    // spec login.yaml POST. Synapse handlers/auth.py: 400 M_UNKNOWN "Unknown login type …" (`_validate_userid_login`); the
    // legacy `user` field becomes an m.id.user identifier (`convert_client_dict_legacy_fields_to_identifier`).
    if (input.type !== 'm.login.password') throw new MatrixError(400, 'M_UNKNOWN', 'Unknown login type');
    const identifier = input.identifier as { type?: unknown; user?: unknown } | undefined;
    const name = identifier?.type === 'm.id.user' ? identifier.user : input.user;
    if (typeof name !== 'string' || typeof input.password !== 'string') throw new MatrixError(400, 'M_BAD_JSON', 'Missing user or password');
    const userId = name.startsWith('@') ? name : `@${name}:${SERVER_NAME}`;
    const user = this.users.get(userId);
    // Synapse handlers/auth.py INVALID_USERNAME_OR_PASSWORD, 403 M_FORBIDDEN; logins are rate-limited (rest/client/login.py rc_login_*).
    if (!user || user.password !== input.password) throw new MatrixError(403, 'M_FORBIDDEN', 'Invalid username or password');
    const throttled = this.throttleFor(userId);
    if (throttled) throw throttled;
    // spec login.yaml: the given `device_id` is kept, else the server makes one.
    const deviceId = typeof input.device_id === 'string' && input.device_id !== '' ? input.device_id : newDeviceId();
    const token = this.issueToken(userId, deviceId);
    return { user_id: userId, access_token: token, device_id: deviceId, home_server: SERVER_NAME };
  }

  private throttleFor(userId: string): MatrixError | undefined {
    const until = Math.max(this.throttles.get(userId) ?? 0, this.throttles.get('all') ?? 0);
    const wait = until - Date.now();
    if (wait <= 0) return undefined;
    this.throttled.push(Date.now());
    // Synapse api/errors.py LimitExceededError: "Too Many Requests", `retry_after_ms`, `Retry-After` = ceil(ms / 1000) seconds.
    const extra = this.retryAfterStyle !== 'header' ? { retry_after_ms: wait } : {};
    const headers: Record<string, string> = this.retryAfterStyle !== 'body' ? { 'retry-after': String(Math.ceil(wait / 1000)) } : {};
    return new MatrixError(429, 'M_LIMIT_EXCEEDED', 'Too Many Requests', extra, headers);
  }

  private send(auth: Token, room: Room | undefined, roomId: string, type: string, txnId: string, body: unknown, path: string): { event_id: string } {
    // Synapse http/servlet.py `parse_json_object_from_request`: 400 M_BAD_JSON "Content must be a JSON object.".
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new MatrixError(400, 'M_BAD_JSON', 'Content must be a JSON object.');
    // Synapse answers a repeated transaction before anything else (rest/client/transactions.py HttpTransactionCache,
    // then handlers/message.py `get_event_id_from_transaction_id_and_device_id`): the first event stands. Scope: the
    // same device and path, spec "Transaction identifiers".
    const key = `${auth.userId}|${auth.deviceId}|${path}`;
    const earlier = this.txnIds.get(key);
    if (earlier !== undefined && Date.now() - earlier.at < this.txnIdWindowMs) return { event_id: earlier.eventId };
    // Synapse: 403 M_FORBIDDEN (event_auth.py `_check_joined_room` says "User … not in room … (…)"; the fake's text is api/auth/base.py's).
    if (!room || !room.joined.has(auth.userId)) throw new MatrixError(403, 'M_FORBIDDEN', `User ${auth.userId} not in room ${roomId}, and room previews are disabled`);
    // Synapse event_auth.py `_can_send_event`: "You don't have permission to post that to the room. user_level (…) < send_level (…)".
    if (room.muted.has(auth.userId)) throw new MatrixError(403, 'M_FORBIDDEN', `You don't have permission to post that to the room. user_level (0) < send_level (50)`);
    const throttled = this.throttleFor(auth.userId);
    if (throttled) throw throttled;
    const content = body as Record<string, unknown>;
    // The PDU as Synapse would build it, measured as canonical JSON.
    const pdu = {
      auth_events: Array.from({ length: 3 }, newEventId),
      content,
      depth: room.events.length + 1,
      hashes: { sha256: randomBytes(32).toString('base64').replace(/=+$/, '') },
      origin: SERVER_NAME,
      origin_server_ts: Date.now(),
      prev_events: [newEventId()],
      room_id: room.id,
      sender: auth.userId,
      signatures: { [SERVER_NAME]: { 'ed25519:a_key': randomBytes(64).toString('base64').replace(/=+$/, '') } },
      type,
      unsigned: { age_ts: Date.now() },
    };
    // Synapse event_auth.py `_check_size_limits`: EventSizeError("event too large") is 413 M_TOO_LARGE (api/errors.py).
    if (Buffer.byteLength(canonicalJson(pdu), 'utf8') > MAX_EVENT_BYTES) throw new MatrixError(413, 'M_TOO_LARGE', 'event too large');
    const event = this.post(room, auth.userId, type, content, undefined, { userId: auth.userId, deviceId: auth.deviceId, txnId });
    this.txnIds.set(key, { eventId: event.event_id, at: Date.now() });
    return { event_id: event.event_id };
  }

  private async sync(auth: Token, query: URLSearchParams, res: ServerResponse | undefined): Promise<Record<string, unknown>> {
    const sinceRaw = query.get('since');
    const since = sinceRaw === null ? undefined : parseToken(sinceRaw);
    if (sinceRaw !== null && since === undefined) throw invalidToken(sinceRaw);
    // spec sync.yaml `timeout`: default 0, return at once.
    const timeout = Math.min(MAX_LONG_POLL_MS, Math.max(0, Number(query.get('timeout') ?? 0) || 0));
    const limit = timelineLimit(query.get('filter'));
    // Waits only for an incremental sync with a timeout and nothing new: Synapse handlers/sync.py
    // `_wait_for_sync_for_user` ("if timeout == 0 or since_token is None or full_state"); spec "Syncing" (long poll).
    if (since !== undefined && timeout > 0 && !this.hasNews(auth.userId, since)) {
      await new Promise<void>((resolve) => {
        const poll: Poll = {
          userId: auth.userId,
          wake: () => {
            clearTimeout(timer);
            this.polls.delete(poll);
            resolve();
          },
        };
        const timer = setTimeout(poll.wake, timeout);
        this.polls.add(poll);
        res?.once('close', poll.wake);
      });
      if (auth.revoked) throw new MatrixError(401, 'M_UNKNOWN_TOKEN', 'Unrecognised access token', { soft_logout: false });
    }
    return this.syncBody(auth, since, limit);
  }

  private hasNews(userId: string, since: number): boolean {
    for (const room of this.rooms.values()) {
      if (!room.joined.has(userId) && !room.invited.has(userId) && !room.events.some((stored) => stored.position > since && stored.event.state_key === userId)) continue;
      if (room.events.some((stored) => stored.position > since)) return true;
    }
    return [...this.user(userId).accountData.values()].some((data) => data.position > since);
  }

  private syncBody(auth: Token, since: number | undefined, limit: number): Record<string, unknown> {
    const userId = auth.userId;
    const join: Record<string, unknown> = {};
    const invite: Record<string, unknown> = {};
    const leave: Record<string, unknown> = {};
    const shown = (stored: StoredEvent) => this.clientEvent(stored, auth);
    for (const room of this.rooms.values()) {
      // spec sync.yaml `rooms.invite`: `invite_state` as stripped state (spec "Stripped state").
      if (room.invited.has(userId)) {
        const changed = since === undefined || room.events.some((stored) => stored.position > since && stored.event.state_key === userId);
        if (changed) invite[room.id] = { invite_state: { events: this.strippedState(room, userId) } };
        continue;
      }
      if (room.joined.has(userId)) {
        const joinedAt = lastMembershipPosition(room, userId);
        const after = since === undefined ? undefined : since;
        const fresh = after === undefined ? room.events : room.events.filter((stored) => stored.position > after);
        if (after !== undefined && fresh.length === 0) continue;
        // The newest `limit` events, `limited` when some were left out: spec definitions/timeline_batch.yaml `limited`,
        // "Syncing"; Synapse handlers/sync.py `_load_filtered_recents` (which also sets `limited` for a room newly joined).
        const timeline = fresh.slice(-limit);
        const limited = timeline.length < fresh.length || (after === undefined && room.events.length > timeline.length);
        // Initial sync, a gap, or a join since `since`: the state at the timeline's start comes too (spec sync.yaml `state`:
        // "up to the start of the timeline"). After a gap the spec and Synapse send only the delta since `since`; the fake all of it.
        const withState = after === undefined || limited || joinedAt > after;
        const firstShown = timeline[0]?.position ?? Number.MAX_SAFE_INTEGER;
        const state = withState ? currentState(room.events.filter((stored) => stored.position < firstShown)).map(shown) : [];
        join[room.id] = {
          timeline: { events: timeline.map(shown), limited, prev_batch: `s${Math.max(0, firstShown - 1)}` },
          state: { events: state },
          account_data: { events: [] },
          ephemeral: { events: [] },
          summary: { 'm.joined_member_count': room.joined.size, 'm.invited_member_count': room.invited.size },
          unread_notifications: { highlight_count: 0, notification_count: 0 },
        };
        continue;
      }
      // Left (or kicked) since `since`: the leave event, once (spec sync.yaml `rooms.leave`).
      if (since !== undefined && room.events.some((stored) => stored.position > since && stored.event.state_key === userId && stored.event.content.membership === 'leave')) {
        leave[room.id] = { timeline: { events: room.events.filter((stored) => stored.position > since && stored.event.state_key === userId).map(shown), limited: false } };
      }
    }
    const accountData = [...this.user(userId).accountData]
      .filter(([, data]) => since === undefined || data.position > since)
      .map(([type, data]) => ({ type, content: data.content }));
    // Response shape: spec sync.yaml (`next_batch`, `rooms.join/invite/leave/knock`, `account_data`, …).
    return {
      next_batch: `s${this.position}`,
      rooms: { join, invite, leave, knock: {} },
      account_data: { events: accountData },
      presence: { events: [] },
      to_device: { events: [] },
      device_lists: { changed: [], left: [] },
      device_one_time_keys_count: { signed_curve25519: 0 },
    };
  }

  private messages(auth: Token, room: Room | undefined, query: URLSearchParams): Record<string, unknown> {
    // spec message_pagination.yaml. Not in the room: 403 M_FORBIDDEN, Synapse handlers/pagination.py `get_messages` via
    // api/auth/base.py `check_user_in_room_or_world_readable` (its text is "User … not in room …, and room previews are disabled").
    if (!room || !room.joined.has(auth.userId)) throw new MatrixError(403, 'M_FORBIDDEN', 'User not in room');
    const fromRaw = query.get('from');
    // `dir` is required in the spec; Synapse streams/config.py `PaginationConfig.from_request` defaults it to `f`, the fake to `b`.
    const dir = query.get('dir') ?? 'b';
    if (dir !== 'f' && dir !== 'b') throw new MatrixError(400, 'M_INVALID_PARAM', 'Unknown dir');
    // Default 10 (spec; Synapse rest/client/room.py `default_limit=10`), at most 1000 (Synapse streams/config.py MAX_LIMIT).
    const limit = Math.min(1000, Math.max(1, Number(query.get('limit') ?? 10) || 10));
    const from = fromRaw === null ? (dir === 'f' ? 0 : this.position) : parseToken(fromRaw);
    // Synapse streams/config.py answers a bad `from`/`to` with 400 M_UNKNOWN "'from' parameter is invalid"; the fake's text differs.
    if (from === undefined) throw invalidToken(fromRaw!);
    // `to` stops the page at that token (the spec's /messages `to`; Synapse's
    // paginate_room_events_by_topological_ordering `to_key`).
    const toRaw = query.get('to');
    const to = toRaw === null ? undefined : parseToken(toRaw);
    if (toRaw !== null && to === undefined) throw invalidToken(toRaw);
    const inRange = (stored: StoredEvent) =>
      dir === 'f' ? stored.position > from && (to === undefined || stored.position <= to) : stored.position <= from && (to === undefined || stored.position > to);
    const events = dir === 'f' ? room.events.filter(inRange).slice(0, limit) : room.events.filter(inRange).slice(-limit).reverse();
    const end = dir === 'f' ? (events.at(-1)?.position ?? from) : Math.max(0, (events.at(-1)?.position ?? 1) - 1);
    // Synapse (handlers/pagination.py `get_messages`) leaves `end` out only when the
    // page is empty and nothing lies beyond it: the start of history going back, the
    // room's newest event (or `to`) going forward.
    return { chunk: events.map((stored) => this.clientEvent(stored, auth)), start: `s${from}`, ...(events.length > 0 ? { end: `s${end}` } : {}) };
  }

  private clientEvent(stored: StoredEvent, auth: Token): Record<string, unknown> {
    const { room_id: _room, ...event } = stored.event;
    // No `room_id` in sync's events and `unsigned.age`: spec definitions/client_event_without_room_id.yaml.
    const unsigned: Record<string, unknown> = { age: Math.max(0, Date.now() - event.origin_server_ts) };
    // The echo of a device's own send carries its txnId, and only to that device: spec client_event_without_room_id.yaml
    // `transaction_id` ("if the client being given the event is the same one which sent it").
    if (stored.device && stored.device.userId === auth.userId && stored.device.deviceId === auth.deviceId) unsigned.transaction_id = stored.device.txnId;
    return { ...event, unsigned };
  }

  // spec "Stripped state" (sender, type, state_key, content only); the types are Synapse config/api.py's default
  // room_prejoin_state less m.room.avatar and m.room.topic, plus the user's own m.room.member.
  private strippedState(room: Room, userId: string): Record<string, unknown>[] {
    return currentState(room.events)
      .filter((stored) => ['m.room.name', 'm.room.create', 'm.room.encryption', 'm.room.join_rules', 'm.room.canonical_alias'].includes(stored.event.type) || stored.event.state_key === userId)
      .map((stored) => ({ type: stored.event.type, state_key: stored.event.state_key, sender: stored.event.sender, content: stored.event.content }));
  }
}

/** `/_matrix/client/v1/media/download/{serverName}/{mediaId}[/{fileName}]` or the v3 (and r0) media route; else undefined. */
function mediaDownloadPath(path: string): { route: 'v1' | 'v3'; serverName: string; mediaId: string } | undefined {
  const match = /^\/_matrix\/(client\/v1\/media|media\/(?:v3|r0))\/download\/([^/]+)\/([^/]+)(?:\/[^/]+)?$/.exec(path);
  if (!match) return undefined;
  try {
    return { route: match[1] === 'client/v1/media' ? 'v1' : 'v3', serverName: decodeURIComponent(match[2]!), mediaId: decodeURIComponent(match[3]!) };
  } catch {
    return undefined;
  }
}

function ok(body: unknown): { status: number; body: unknown } {
  return { status: 200, body };
}

function currentState(events: readonly StoredEvent[]): StoredEvent[] {
  const latest = new Map<string, StoredEvent>();
  for (const stored of events) if (stored.event.state_key !== undefined) latest.set(`${stored.event.type}\u0000${stored.event.state_key}`, stored);
  return [...latest.values()].sort((a, b) => a.position - b.position);
}

function lastMembershipPosition(room: Room, userId: string): number {
  const member = room.events.filter((stored) => stored.event.type === 'm.room.member' && stored.event.state_key === userId).at(-1);
  return member?.position ?? 0;
}

/**
 * A token this server did not make (another server's, a mangled one): Synapse's
 * `StreamToken.from_string` (synapse/types/__init__.py) raises a plain
 * `SynapseError(400, …)`, so the errcode is M_UNKNOWN.
 */
function invalidToken(token: string): MatrixError {
  return new MatrixError(400, 'M_UNKNOWN', `Invalid stream token ${JSON.stringify(token.slice(0, 100))}`);
}

function parseToken(token: string): number | undefined {
  const match = /^s(\d{1,15})$/.exec(token);
  return match ? Number(match[1]) : undefined;
}

/**
 * The timeline limit of an inline filter (`{"room":{"timeline":{"limit":N}}}`); Synapse's default without one.
 * Bad JSON: Synapse rest/client/sync.py, 400 M_NOT_JSON "Invalid filter JSON" (the fake's text differs).
 */
function timelineLimit(filter: string | null): number {
  if (filter === null || !filter.startsWith('{')) return DEFAULT_TIMELINE_LIMIT;
  try {
    const parsed = JSON.parse(filter) as { room?: { timeline?: { limit?: unknown } } };
    const limit = parsed.room?.timeline?.limit;
    return typeof limit === 'number' && Number.isInteger(limit) && limit > 0 ? Math.min(limit, 1000) : DEFAULT_TIMELINE_LIMIT;
  } catch {
    throw new MatrixError(400, 'M_NOT_JSON', 'Invalid filter');
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new Error('too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** An event id as room versions ≥ 4 make them: `$` + 43 characters of URL-safe base64 (spec rooms/v4.md, "Event IDs"). */
function newEventId(): string {
  return `$${randomBytes(32).toString('base64url').slice(0, 43)}`;
}

// Ten upper-case characters, as Synapse handlers/device.py makes them (`random_string(10).upper()`; letters there, hex here).
function newDeviceId(): string {
  return randomBytes(8).toString('hex').toUpperCase().slice(0, 10);
}

/** Matrix canonical JSON: keys sorted, no insignificant whitespace, UTF-8 (non-ASCII not escaped). Spec appendices.md "Canonical JSON". */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
}
