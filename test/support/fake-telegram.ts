import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { DownloadHold } from './download-hold';

/**
 * A Telegram Bot API server on 127.0.0.1, written from the facts in
 * PLATFORMS.md (copied to test/fixtures/telegram-bot-api.md, which
 * fake-telegram.test.ts checks this against). It speaks the real wire format —
 * `POST /bot<token>/<method>`, JSON in, `{ok, result}` or `{ok:false,
 * error_code, description, parameters?}` out, the HTTP status equal to the
 * error code — and is no kinder than the real service:
 * - `getUpdates`: `offset` confirms (drops) every update below it, `limit`
 *   1–100, `timeout` long-polls, a second poll that has to wait ends the one
 *   waiting with `409 Conflict: terminated by other getUpdates request`, the
 *   same offset asked again at once is slowed down; an offset beyond
 *   the queue's tail is ignored (the queue is served from its head), an
 *   update expires 24 hours after its message's date, and after a week
 *   without updates the next id is chosen at random (see `getUpdates`,
 *   `enqueue`); while a webhook is set, `409 … while webhook is active`;
 * - `sendMessage`: 1–4096 code points after entity parsing, HTML parse mode
 *   with Telegram's tag set (anything else is `400 can't parse entities`),
 *   `message_thread_id` only in forums (else `400 message thread not found`,
 *   and the General topic id 1 too), `reply_parameters`, the permanent 403/400
 *   errors, a migrated group's `400 … upgraded to a supergroup chat` with
 *   `migrate_to_chat_id`, and `429` with `retry_after` while a throttle holds;
 * - `sendChatAction`, `getMe`, `deleteWebhook` (with `drop_pending_updates`),
 *   `getWebhookInfo`;
 * - files (issue 38): people send photos (several PhotoSizes), voice notes and
 *   documents (`userSendsPhoto`, `userSendsVoice`, `userSendsDocument`);
 *   `getFile` refuses a file over 20 MB and an unknown id in the server's
 *   words, and only then is the file downloadable at
 *   `GET /file/bot<token>/<file_path>`, for an hour; a file can be deleted or
 *   fail once (`deleteFile`, `failNextDownload`), and every download is counted
 *   (`downloads`).
 * Tests script the people (`userSays`), the chats and the faults, and read what
 * the bot sent. The fake's clock (message dates, expiry, the quiet week) can be
 * moved forward (`advanceClock`); the rest of the fake runs on real time.
 *
 * Sources named in the comments below (issue 33): "Bot API docs" is
 * core.telegram.org/bots/api; "Client::…" is tdlib/telegram-bot-api
 * `telegram-bot-api/Client.cpp` (checked at 01a3679, May 2026); "td …" is
 * tdlib/td (checked at 022d602, Jul 2026); "FACTS" is
 * test/fixtures/telegram-bot-api.md, used only where no primary source was found.
 * For files (issue 38): Client.cpp and Client.h checked again at 01a3679, td's
 * FileType.cpp at 02db4f2; what only users report is named by its GitHub issue.
 */

export interface FakeUser {
  readonly id: number;
  readonly is_bot: boolean;
  readonly first_name: string;
  readonly last_name?: string;
  readonly username?: string;
}

export type ChatType = 'private' | 'group' | 'supergroup' | 'channel';

export interface FakeChat {
  readonly id: number;
  readonly type: ChatType;
  readonly title?: string;
  readonly username?: string;
  readonly first_name?: string;
  readonly is_forum?: boolean;
}

interface ChatState {
  chat: FakeChat;
  nextMessageId: number;
  /** Message ids that exist (for reply_parameters). */
  readonly messages: Set<number>;
  /** Forum topics: thread id → name. */
  readonly topics: Map<number, string>;
  blocked?: 'blocked' | 'kicked' | 'deactivated';
  migratedTo?: number;
}

export interface SentMessage {
  readonly chatId: number;
  readonly messageId: number;
  readonly threadId: number | undefined;
  /** The text as the user sees it (entities parsed out). */
  readonly text: string;
  /** What the bot posted, as it posted it. */
  readonly raw: string;
  readonly parseMode: string | undefined;
  readonly entities: readonly Entity[];
  readonly replyTo: number | undefined;
  readonly at: number;
}

export interface Entity {
  readonly type: string;
  /** UTF-16 units, as Telegram counts entity offsets. */
  readonly offset: number;
  readonly length: number;
  readonly url?: string;
  readonly language?: string;
}

export interface ChatAction {
  readonly chatId: number;
  readonly action: string;
  readonly threadId: number | undefined;
  readonly at: number;
}

export interface Update {
  readonly update_id: number;
  readonly message?: Record<string, unknown>;
}

/** A file a person sent, as the fake keeps it. */
export interface FakeFile {
  /** What the bot passes to getFile (base64url, as Bot API file ids are; not their real encoding). */
  readonly fileId: string;
  readonly fileUniqueId: string;
  /** `file_path` in getFile's answer: `<td's directory for the type>/file_<n>.<ext>`. */
  readonly path: string;
  readonly bytes: Uint8Array;
}

/** One request on the download route, whatever was answered. */
export interface DownloadRecord {
  /** The path asked for (after `/file/bot<token>/`). */
  readonly path: string;
  /** The file it named, when it named one with the right token. */
  readonly fileId: string | undefined;
  readonly status: number;
  readonly at: number;
}

/** A scripted answer for one call: return it to answer instead of the fake's own logic, or undefined to pass. */
export type Fault = (method: string, params: Record<string, unknown>) => FaultAnswer | undefined;
export type FaultAnswer =
  | { readonly kind: 'error'; readonly code: number; readonly description: string; readonly parameters?: Record<string, unknown> }
  /** Takes the call and never answers (a dead network path). */
  | { readonly kind: 'hang' }
  /** Runs the call, then drops the connection before the answer: the message was sent, the bot does not know. */
  | { readonly kind: 'drop-after' }
  /** Runs the call and never answers: the message was sent, the bot is left waiting. */
  | { readonly kind: 'hang-after' }
  /** Answers all but the last byte, then the rest after `ms`: the answer sits half-read in the bot's socket. */
  | { readonly kind: 'trickle'; readonly ms: number }
  /** Anything at all as the body (hostile server tests). */
  | { readonly kind: 'raw'; readonly status: number; readonly body: string };

export interface RequestRecord {
  readonly method: string;
  readonly params: Record<string, unknown>;
  readonly at: number;
}

/** Not from a source: the fake's own guard against runaway bodies (the real server's body limit was not checked). */
const MAX_BODY = 1 << 20;
/** Bot API docs, sendMessage: `text` "1-4096 characters after entities parsing"; td MessageContent.cpp counts utf8_length (code points) against `message_text_length_max` (4096, OptionManager.cpp). */
export const MAX_TEXT_CODE_POINTS = 4096;
/** telegram-bot-api Client.h MAX_DOWNLOAD_FILE_SIZE = 20 << 20: bots download at most 20 MB (Bot API docs, getFile). */
export const MAX_BOT_DOWNLOAD_BYTES = 20 << 20;
/** Bot API docs, File: "It is guaranteed that the link will be valid for at least 1 hour" (the fake: exactly that, no kinder). */
export const FILE_LINK_VALID_MS = 60 * 60 * 1000;
/** telegram-bot-api Client.h LONG_POLL_MAX_TIMEOUT = 50 (Client::process_get_updates_query clamps `timeout` to 0…50). */
const MAX_LONG_POLL_S = 50;
const DAY_S = 24 * 60 * 60;
/** telegram-bot-api keeps a message's update until the message's date + 86 400 s (Client::add_message_update: `left_time = message_date + 86400 - now`). */
export const UPDATE_LIFETIME_S = DAY_S;
/** Bot API docs, Update.update_id: "If there are no new updates for at least a week, then identifier of the next update will be chosen randomly". */
export const QUIET_WEEK_MS = 7 * DAY_S * 1000;
/**
 * td's TQueue::get (tddb/td/db/TQueue.cpp): an offset more than this beyond the queue's tail is "in the
 * future" and ignored; one more than MAX_QUEUE_EVENTS (100000 there) below its head is "in the past".
 */
const FUTURE_SLACK = 10;
const MAX_QUEUE_EVENTS = 100_000;

/** td's TQueue::push (tddb/td/db/TQueue.cpp) picks a fresh tail with Random::fast(2·max(MAX_QUEUE_EVENTS, 10⁶) + 1, MAX_ID / 2): [2 000 001, 10⁹]. */
function randomUpdateId(): number {
  return 2_000_001 + Math.floor(Math.random() * (1_000_000_000 - 2_000_001));
}

interface Poll {
  readonly offset: number;
  readonly limit: number;
  readonly res: ServerResponse;
  /** How this poll's answer is written (a fault may shape it). */
  readonly answer: (status: number, body: unknown) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

export class FakeTelegram {
  readonly token: string;
  readonly bot: FakeUser;
  private server: Server | undefined;
  private port = 0;
  private readonly chats = new Map<number, ChatState>();
  private readonly users = new Map<number, FakeUser & { deactivated?: boolean }>();
  private updates: Update[] = [];
  /** The queue's tail: the id the next update gets. */
  private nextUpdateId: number;
  /** update_id → when it expires (unix s of the fake's clock). */
  private readonly expiresAt = new Map<number, number>();
  /** When the last update was queued (the fake's clock, ms). */
  private lastUpdateAt: number | undefined;
  private readonly pickUpdateId: () => number;
  private clockOffsetMs = 0;
  /** The previous getUpdates' offset and when it came (real time). */
  private previousPoll: { readonly offset: number; readonly at: number } | undefined;
  private poll: Poll | undefined;
  /** Throttles: chat id (or 'all') → until when (ms) sendMessage answers 429. */
  private readonly throttles = new Map<number | 'all', number>();
  private readonly faults: Fault[] = [];
  private webhookUrl = '';
  /** Everything the bot sent, in order. */
  readonly sent: SentMessage[] = [];
  readonly actions: ChatAction[] = [];
  readonly requests: RequestRecord[] = [];
  /** update_id → every time it was handed to a poller (a redelivery adds another). */
  readonly handed = new Map<number, number[]>();
  /** Every 409 given, with when. */
  readonly conflicts: number[] = [];
  /** Updates confirmed so far (the highest offset seen minus one). */
  confirmedBelow = 0;
  private readonly sendListeners = new Set<(message: SentMessage) => void>();
  /** file_id → the file; file_path → file_id. */
  private readonly files = new Map<string, FakeFile & { deleted?: boolean; failures: number[]; linkValidUntil?: number }>();
  private readonly filePaths = new Map<string, string>();
  private fileCounter = 0;
  /** Every request on the download route, in the order they were answered. */
  readonly downloads: DownloadRecord[] = [];
  /** Downloads waiting for `holdDownloads`'s release, while it holds. */
  private readonly downloadHold = new DownloadHold();

  constructor(
    options: {
      token?: string;
      bot?: Partial<FakeUser>;
      /** The first update's id (default 100 000: not from a source; Bot API docs, Update: ids "start from a certain positive number"). */
      firstUpdateId?: number;
      /** The id picked after a quiet week (default: at random, as telegram-bot-api does). */
      randomUpdateId?: () => number;
    } = {},
  ) {
    this.token = options.token ?? '123456789:AAFakeTokenForTestsOnly_abcdefghijk';
    // The bot's id is the token's part before ':' (ClientManager::send reads the user id from it).
    this.bot = { id: Number(this.token.split(':')[0]), is_bot: true, first_name: 'Homing', username: 'homing_test_bot', ...options.bot };
    this.nextUpdateId = options.firstUpdateId ?? 100_000;
    this.pickUpdateId = options.randomUpdateId ?? randomUpdateId;
  }

  get apiRoot(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(port = 0): Promise<void> {
    const server = createServer((req, res) => this.onRequest(req, res));
    server.on('clientError', (_error, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    if (this.poll) {
      clearTimeout(this.poll.timer);
      this.poll.res.destroy();
      this.poll = undefined;
    }
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  // ---- scripting -------------------------------------------------------

  addUser(user: Omit<FakeUser, 'is_bot'> & { is_bot?: boolean }): FakeUser {
    const full: FakeUser = { is_bot: false, ...user };
    this.users.set(full.id, full);
    if (!this.chats.has(full.id)) {
      this.addChat({ id: full.id, type: 'private', first_name: full.first_name, ...(full.username ? { username: full.username } : {}) });
    }
    return full;
  }

  addChat(chat: FakeChat): FakeChat {
    // In a forum, message 1 stands for the General topic (thread id 1: Client.h GENERAL_FORUM_TOPIC_ID), so topics start at 2.
    this.chats.set(chat.id, { chat, nextMessageId: chat.is_forum ? 2 : 1, messages: new Set(), topics: new Map() });
    return chat;
  }

  /**
   * Opens a forum topic in a forum supergroup; returns its thread id (the id of its service message:
   * not checked against a source). Client::JsonMessage writes `forum_topic_created` and `is_topic_message`.
   */
  createTopic(chatId: number, name: string, by: FakeUser): number {
    const state = this.chatState(chatId);
    if (!state.chat.is_forum) throw new Error(`chat ${chatId} is not a forum`);
    const messageId = state.nextMessageId++;
    state.messages.add(messageId);
    state.topics.set(messageId, name);
    this.enqueue({
      message_id: messageId,
      message_thread_id: messageId,
      from: by,
      chat: state.chat,
      date: this.unixNow(),
      forum_topic_created: { name, icon_color: 7322096 },
      is_topic_message: true,
    });
    return messageId;
  }

  /**
   * A person writes. In a forum, `threadId` names the topic (absent: General);
   * elsewhere a reply gets the root of its reply chain as message_thread_id,
   * as Telegram does in supergroups — an adapter must not echo that one back.
   * (Client::get_forum_topic_id: a messageTopicThread gives its root message id, the General
   * topic gives none. The fake takes the replied-to message as the root: one-step chains only.)
   */
  userSays(options: {
    from: FakeUser;
    chatId?: number;
    text?: string;
    threadId?: number;
    replyTo?: number;
    entities?: Entity[];
    extra?: Record<string, unknown>;
  }): Record<string, unknown> {
    const chatId = options.chatId ?? options.from.id;
    const state = this.chatState(chatId);
    const messageId = state.nextMessageId++;
    state.messages.add(messageId);
    const message: Record<string, unknown> = {
      message_id: messageId,
      from: options.from,
      chat: state.chat,
      date: this.unixNow(),
      ...(options.text !== undefined ? { text: options.text } : {}),
      ...(options.entities ? { entities: options.entities } : {}),
      ...options.extra,
    };
    if (state.chat.is_forum && options.threadId !== undefined) {
      message.message_thread_id = options.threadId;
      message.is_topic_message = true;
    } else if (options.replyTo !== undefined && state.chat.type === 'supergroup') {
      message.message_thread_id = options.replyTo;
    }
    if (options.replyTo !== undefined) {
      const replied = this.sent.find((sent) => sent.chatId === chatId && sent.messageId === options.replyTo);
      message.reply_to_message = {
        message_id: options.replyTo,
        chat: state.chat,
        date: this.unixNow(),
        ...(replied ? { from: this.bot, text: replied.text } : {}),
      };
    }
    this.enqueue(message);
    return message;
  }

  /**
   * A person sends a photo: Telegram hands it in several sizes (PhotoSize,
   * Client::JsonPhoto; smallest first), each a file of its own. `bytes` is the
   * largest size (width × height); the smaller ones are thumbnails with bytes
   * of their own. (The size boxes 90/320/800/1280 px follow Telegram's s/m/x/y
   * photo sizes: not checked against a source.)
   */
  userSendsPhoto(
    chatId: number,
    from: FakeUser,
    bytes: Uint8Array,
    options: { caption?: string; captionEntities?: Entity[]; width?: number; height?: number; threadId?: number } = {},
  ): { message: Record<string, unknown>; file: FakeFile } {
    const width = options.width ?? 1280;
    const height = options.height ?? 960;
    const sizes: Record<string, unknown>[] = [];
    for (const box of [90, 320, 800]) {
      if (box >= Math.max(width, height)) break;
      const scale = box / Math.max(width, height);
      const [w, h] = [Math.max(1, Math.round(width * scale)), Math.max(1, Math.round(height * scale))];
      const thumbnail = this.storeFile('photos', 'jpg', Buffer.from(`thumbnail ${w}x${h}`));
      sizes.push(photoSize(thumbnail, w, h));
    }
    const file = this.storeFile('photos', 'jpg', bytes);
    sizes.push(photoSize(file, width, height));
    const message = this.userSays({ from, chatId, ...threaded(options.threadId), extra: { photo: sizes, ...captioned(options) } });
    return { message, file };
  }

  /** A person sends a voice note (Client::JsonVoiceNote: duration, mime_type, then the file's fields; OGG/Opus by default). */
  userSendsVoice(
    chatId: number,
    from: FakeUser,
    bytes: Uint8Array,
    options: { durationS?: number; mimeType?: string; caption?: string; captionEntities?: Entity[]; threadId?: number } = {},
  ): { message: Record<string, unknown>; file: FakeFile } {
    const file = this.storeFile('voice', 'oga', bytes);
    const voice = { duration: options.durationS ?? 1, mime_type: options.mimeType ?? 'audio/ogg', ...fileFields(file) };
    return { message: this.userSays({ from, chatId, ...threaded(options.threadId), extra: { voice, ...captioned(options) } }), file };
  }

  /** A person sends a file (Client::JsonDocument: file_name and mime_type when known, then the file's fields). */
  userSendsDocument(
    chatId: number,
    from: FakeUser,
    bytes: Uint8Array,
    options: { fileName?: string; mimeType?: string; caption?: string; captionEntities?: Entity[]; threadId?: number } = {},
  ): { message: Record<string, unknown>; file: FakeFile } {
    const extension = /\.([A-Za-z0-9]{1,8})$/.exec(options.fileName ?? '')?.[1] ?? '';
    const file = this.storeFile('documents', extension, bytes);
    const document = {
      ...(options.fileName !== undefined ? { file_name: options.fileName } : {}),
      ...(options.mimeType !== undefined ? { mime_type: options.mimeType } : {}),
      ...fileFields(file),
    };
    return { message: this.userSays({ from, chatId, ...threaded(options.threadId), extra: { document, ...captioned(options) } }), file };
  }

  /**
   * The server no longer has the file: getFile answers as telegram-bot-api does when td cannot download
   * it (Client::on_update_file, "wrong file_id or the file is temporarily unavailable"), and its path is
   * gone from the download route (404, see `onDownload`).
   */
  deleteFile(fileId: string): void {
    this.fileState(fileId).deleted = true;
  }

  /** The next download of this file answers `status` (default 500) once, then it is served again. */
  failNextDownload(fileId: string, status = 500): void {
    this.fileState(fileId).failures.push(status);
  }

  /**
   * From now on requests on the download route are taken and not answered until the returned function is
   * called; then they are answered as they would have been (a request whose bot went away meanwhile is
   * recorded with status 0).
   */
  holdDownloads(): () => void {
    return this.downloadHold.hold();
  }

  /** The file as the fake keeps it (by file_id). */
  file(fileId: string): FakeFile | undefined {
    return this.files.get(fileId);
  }

  /** The person blocked the bot (private chat), the bot was removed (group), or the account is gone (errors: see `checkChat`). */
  block(chatId: number, how: 'blocked' | 'kicked' | 'deactivated' = 'blocked'): void {
    this.chatState(chatId).blocked = how;
  }

  /**
   * A group becomes a supergroup: the service messages arrive (Client::JsonMessage: `migrate_to_chat_id`,
   * `migrate_from_chat_id`), and sends to the old id are refused with the new one (see `checkChat`).
   */
  migrate(groupId: number, supergroupId: number, by: FakeUser, options: { announce?: boolean } = {}): void {
    const old = this.chatState(groupId);
    old.migratedTo = supergroupId;
    const chat: FakeChat = { id: supergroupId, type: 'supergroup', ...(old.chat.title ? { title: old.chat.title } : {}) };
    this.addChat(chat);
    if (options.announce === false) return;
    this.enqueue({ message_id: old.nextMessageId++, from: by, chat: old.chat, date: this.unixNow(), migrate_to_chat_id: supergroupId });
    const fresh = this.chatState(supergroupId);
    this.enqueue({ message_id: fresh.nextMessageId++, from: by, chat, date: this.unixNow(), migrate_from_chat_id: groupId });
  }

  /** sendMessage and sendChatAction to this chat (or to any: 'all') answer 429 for `seconds` (the answer's shape: Query::set_retry_after_error). */
  throttle(chatId: number | 'all', seconds: number): void {
    this.throttles.set(chatId, Date.now() + seconds * 1000);
  }

  /** Adds a fault that is asked first on every call; returns a function removing it. */
  fault(fault: Fault): () => void {
    this.faults.push(fault);
    return () => {
      const index = this.faults.indexOf(fault);
      if (index >= 0) this.faults.splice(index, 1);
    };
  }

  /**
   * Another program sets a webhook. An open long poll ends with
   * `409 Conflict: terminated by setWebhook request` (Client::abort_long_poll).
   * The fake never posts to the URL: it stands for a webhook nobody answers any
   * more, so updates stay queued, as telegram-bot-api keeps them while its
   * webhook fails (they stay in td's TQueue until they expire; the webhook's retry
   * schedule, WebhookActor.cpp, is not modelled).
   */
  setWebhook(url: string): void {
    this.webhookUrl = url;
    const poll = this.poll;
    if (!url || !poll) return;
    this.poll = undefined;
    clearTimeout(poll.timer);
    this.conflicts.push(Date.now());
    poll.answer(409, { ok: false, error_code: 409, description: 'Conflict: terminated by setWebhook request' });
  }

  get webhook(): string {
    return this.webhookUrl;
  }

  /** Moves the fake's clock (message dates, the 24 h expiry, the quiet week) forward. */
  advanceClock(ms: number): void {
    this.clockOffsetMs += ms;
  }

  /** Updates not confirmed yet (and not expired). */
  pendingUpdates(): readonly Update[] {
    this.dropExpired();
    return this.updates;
  }

  sentTo(chatId: number): SentMessage[] {
    return this.sent.filter((message) => message.chatId === chatId);
  }

  onSend(listener: (message: SentMessage) => void): () => void {
    this.sendListeners.add(listener);
    return () => this.sendListeners.delete(listener);
  }

  /** Whether a getUpdates long poll is open right now. */
  get polling(): boolean {
    return this.poll !== undefined;
  }

  // ---- the wire --------------------------------------------------------

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    res.on('error', () => {});
    req.on('error', () => res.destroy());
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (download) return this.onDownload(res, download[1]!, download[2]!);
    // HttpConnection::handle: `/bot<token>/<method>`, anything else `404 Not Found` in the error envelope (send_http_error).
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!match) return void this.reply(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    const [, token, method] = match;
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        this.reply(res, 413, { ok: false, error_code: 413, description: 'Request Entity Too Large' });
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY) return;
      // A well-formed token the server cannot log in with: `401 Unauthorized` (Client::get_closing_error; a malformed
      // one gets "Unauthorized: invalid token specified", ClientManager::send — not modelled).
      if (token !== this.token) return void this.reply(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
      let params: Record<string, unknown>;
      try {
        params = parseParams(req, Buffer.concat(chunks).toString('utf8'), url);
      } catch {
        // Not the real text: td's HttpReader::parse_json_parameters says e.g. "Bad Request: JSON object expected".
        return void this.reply(res, 400, { ok: false, error_code: 400, description: "Bad Request: can't parse JSON" });
      }
      this.requests.push({ method: method!, params, at: Date.now() });
      for (const fault of this.faults) {
        const answer = fault(method!, params);
        if (!answer) continue;
        if (answer.kind === 'hang') return;
        if (answer.kind === 'raw') {
          res.writeHead(answer.status, { 'content-type': 'application/json' });
          res.end(answer.body);
          return;
        }
        if (answer.kind === 'drop-after') {
          this.dispatch(method!, params, () => res.destroy(), req);
          return;
        }
        if (answer.kind === 'hang-after') {
          this.dispatch(method!, params, () => {}, req);
          return;
        }
        if (answer.kind === 'trickle') {
          this.dispatch(method!, params, (status, body) => this.trickle(res, status, body, answer.ms), req, res);
          return;
        }
        return void this.error(res, answer.code, answer.description, answer.parameters);
      }
      this.dispatch(method!, params, (status, body) => this.reply(res, status, body), req, res);
    });
  }

  private dispatch(
    method: string,
    params: Record<string, unknown>,
    answer: (status: number, body: unknown) => void,
    req: IncomingMessage,
    res?: ServerResponse,
  ): void {
    const ok = (result: unknown) => answer(200, { ok: true, result });
    const fail = (code: number, description: string, parameters?: Record<string, unknown>) =>
      answer(code, { ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) });
    // Bot API docs: method names are case-insensitive (the server lowers them); the fake matches them exactly.
    switch (method) {
      case 'getMe':
        // Client::process_get_me_query → JsonUser(full_bot_info): the User plus can_join_groups, can_read_all_group_messages,
        // supports_inline_queries (the newer bot fields are left out).
        return ok({ ...this.bot, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false });
      case 'deleteWebhook': {
        // Client::do_set_webhook: the queue is cleared only with drop_pending_updates; the description
        // says whether there was a webhook.
        if (params.drop_pending_updates === true || params.drop_pending_updates === 'true') this.dropAll();
        const was = this.webhookUrl !== '';
        this.webhookUrl = '';
        return answer(200, { ok: true, result: true, description: was ? 'Webhook was deleted' : 'Webhook is already deleted' });
      }
      case 'getWebhookInfo':
        // Client::JsonWebhookInfo: url ('' when none), has_custom_certificate, pending_update_count.
        return ok({ url: this.webhookUrl, has_custom_certificate: false, pending_update_count: this.pendingUpdates().length });
      case 'getUpdates':
        // Client::process_get_updates_query: refused while a webhook is set.
        if (this.webhookUrl) return fail(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");
        return this.getUpdates(params, answer, req, res);
      case 'sendMessage':
        return this.sendMessage(params, ok, fail);
      case 'sendChatAction': {
        // Client::process_send_chat_action_query: check_chat(Write), so the same chat errors as sendMessage. It passes
        // message_thread_id to td unchecked; td's answer for a wrong topic was not checked. Any `action` is taken
        // here (the real server: "Wrong parameter action in request").
        const checked = this.checkChat(params, fail);
        if (!checked) return;
        const thread = optionalInt(params.message_thread_id);
        if (thread !== undefined && !this.threadExists(checked, thread)) return fail(400, 'Bad Request: message thread not found');
        this.actions.push({ chatId: checked.chat.id, action: String(params.action), threadId: thread, at: Date.now() });
        return ok(true);
      }
      case 'getFile':
        return this.getFile(params, ok, fail);
      default:
        // Client::on_cmd: an unknown method is "Not Found: method not found".
        return fail(404, 'Not Found: method not found');
    }
  }

  private getUpdates(params: Record<string, unknown>, answer: (status: number, body: unknown) => void, req: IncomingMessage, res?: ServerResponse): void {
    // Client::process_get_updates_query: offset 0, limit 100 (1…100), timeout 0 (0…50) by default (Bot API docs, getUpdates).
    const offset = optionalInt(params.offset) ?? 0;
    let limit = Math.min(100, Math.max(1, optionalInt(params.limit) ?? 100));
    let timeout = Math.min(MAX_LONG_POLL_S, Math.max(0, optionalInt(params.timeout) ?? 0));
    // Client::process_get_updates_query: the same offset again within 3 s waits at least 3 s, and
    // within 0.5 s gets one update at most (a poller spinning on one offset is slowed down).
    const at = Date.now();
    const previous = this.previousPoll;
    if (previous?.offset === offset && timeout < 3 && at < previous.at + 3_000) timeout = 3;
    if (previous?.offset === offset && at < previous.at + 500) limit = 1;
    this.previousPoll = { offset, at };
    const ready = this.available(offset, limit);
    if (ready.length > 0 || timeout === 0 || !res) return answer(200, { ok: true, result: this.hand(ready) });
    // A second poller that has to wait (Client::do_get_updates → abort_long_poll): the one waiting is
    // told that another request took over. One answered at once leaves it be. (Client::fail_query_conflict
    // also holds a 409 back 3 s when the previous one was under 3 s ago: not modelled.)
    if (this.poll) {
      const previous = this.poll;
      this.poll = undefined;
      clearTimeout(previous.timer);
      this.conflicts.push(Date.now());
      this.reply(previous.res, 409, {
        ok: false,
        error_code: 409,
        description: 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
      });
    }
    const poll: Poll = {
      offset,
      limit,
      res,
      answer,
      // Client::do_get_updates: the poll ends empty at its hard timeout (long_poll_hard_timeout_).
      timer: setTimeout(() => {
        if (this.poll !== poll) return;
        this.poll = undefined;
        answer(200, { ok: true, result: [] });
      }, timeout * 1000),
    };
    this.poll = poll;
    // The poller went away (killed): its poll ends, nothing was handed (not checked against the server; either way
    // nothing is confirmed before a later call's offset, Bot API docs, getUpdates).
    const onClose = () => {
      if (this.poll !== poll) return;
      clearTimeout(poll.timer);
      this.poll = undefined;
    };
    req.socket.once('close', onClose);
    // A kept-alive socket carries many polls: each takes its listener with it when answered.
    res.once('finish', () => req.socket.off('close', onClose));
  }

  /**
   * Client::process_get_file_query and do_get_file: an empty id is "file_id not specified"
   * (check_remote_file_id); an id td cannot read is "invalid file_id" (TdOnCheckRemoteFileIdCallback's
   * default message: the fake knows only its own ids); a file over MAX_DOWNLOAD_FILE_SIZE is "file is too
   * big" before anything is downloaded; a file td cannot fetch is "wrong file_id or the file is temporarily
   * unavailable" (on_update_file). Otherwise the File (Client::JsonFile → json_store_file: file_id,
   * file_unique_id, file_size when known, file_path relative to the bot's directory), and the path is
   * served from now on for FILE_LINK_VALID_MS.
   */
  private getFile(params: Record<string, unknown>, ok: (result: unknown) => void, fail: (code: number, description: string) => void): void {
    const fileId = typeof params.file_id === 'string' ? params.file_id : params.file_id === undefined ? '' : String(params.file_id);
    if (fileId === '') return fail(400, 'Bad Request: file_id not specified');
    const file = this.files.get(fileId);
    if (!file) return fail(400, 'Bad Request: invalid file_id');
    if (file.bytes.length > MAX_BOT_DOWNLOAD_BYTES) return fail(400, 'Bad Request: file is too big');
    if (file.deleted) return fail(400, 'Bad Request: wrong file_id or the file is temporarily unavailable');
    file.linkValidUntil = this.now() + FILE_LINK_VALID_MS;
    ok({ file_id: file.fileId, file_unique_id: file.fileUniqueId, file_size: file.bytes.length, file_path: file.path });
  }

  /**
   * `GET /file/bot<token>/<file_path>`. telegram-bot-api does not serve files itself: a web server in
   * front of it serves `<working directory>/<token>/<file_path>` (levlam in tdlib/telegram-bot-api#26, #59,
   * #540), so a path that is not there — never fetched by getFile, deleted, its hour over, or under
   * another token — is that server's 404. The body is the one users report from api.telegram.org and a
   * local server (`{"ok":false,"error_code":404,"description":"Not Found"}`, e.g. tdlib/telegram-bot-api#594,
   * eternnoir/pyTelegramBotAPI#2243). Not from a source: the Content-Type (application/octet-stream, so
   * nothing may trust it) and a scripted failure's body.
   */
  private onDownload(res: ServerResponse, token: string, rawPath: string): void {
    const answer = () => this.answerDownload(res, token, rawPath);
    const gone = () => void this.downloads.push({ ...this.downloadTarget(token, rawPath), status: 0, at: Date.now() });
    if (!this.downloadHold.keep(answer, res, gone)) answer();
  }

  private answerDownload(res: ServerResponse, token: string, rawPath: string): void {
    const { path, fileId } = this.downloadTarget(token, rawPath);
    const file = fileId === undefined ? undefined : this.files.get(fileId);
    const record = (status: number) => this.downloads.push({ path, fileId, status, at: Date.now() });
    if (!file || file.deleted || file.linkValidUntil === undefined || this.now() > file.linkValidUntil) {
      record(404);
      return this.reply(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    }
    const failure = file.failures.shift();
    if (failure !== undefined) {
      record(failure);
      if (res.writableEnded || res.destroyed) return;
      res.writeHead(failure, { 'content-type': 'text/plain' });
      res.end(`${failure} scripted failure`);
      return;
    }
    record(200);
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(file.bytes.length) });
    res.end(Buffer.from(file.bytes.buffer, file.bytes.byteOffset, file.bytes.byteLength));
  }

  /** The path a download asks for, and the file it names (under the right token only). */
  private downloadTarget(token: string, rawPath: string): { path: string; fileId: string | undefined } {
    let path: string;
    try {
      path = decodeURIComponent(rawPath);
    } catch {
      path = rawPath;
    }
    return { path, fileId: token === this.token ? this.filePaths.get(path) : undefined };
  }

  /** Keeps a file a person sent under a fresh id and td's path for its type (td FileType.cpp get_file_type_name). */
  private storeFile(directory: 'photos' | 'voice' | 'documents', extension: string, bytes: Uint8Array): FakeFile {
    const n = this.fileCounter++;
    const random = randomBytes(24).toString('base64url');
    const file = {
      fileId: `${FILE_ID_PREFIX[directory]}${n.toString(36)}${random}`,
      fileUniqueId: `AQAD${n.toString(36)}${random.slice(0, 8)}`,
      // td names downloaded files file_<n> in the type's directory (e.g. "documents/file_5", tdlib/telegram-bot-api#26).
      path: `${directory}/file_${n}${extension ? `.${extension}` : ''}`,
      bytes: new Uint8Array(bytes),
      failures: [],
    };
    this.files.set(file.fileId, file);
    this.filePaths.set(file.path, file.fileId);
    return file;
  }

  private fileState(fileId: string): FakeFile & { deleted?: boolean; failures: number[] } {
    const file = this.files.get(fileId);
    if (!file) throw new Error(`the fake has no file ${fileId}`);
    return file;
  }

  /** Bot API docs, getUpdates `offset`: "An update is considered confirmed as soon as getUpdates is called with an offset higher than its update_id". */
  private confirm(offset: number): void {
    this.updates = this.updates.filter((update) => update.update_id >= offset);
    this.confirmedBelow = Math.max(this.confirmedBelow, offset);
  }

  /**
   * What a getUpdates with `offset` is answered with, as telegram-bot-api's
   * Client::do_get_updates and td's TQueue::get choose it: a negative offset
   * forgets all but the last -offset updates; 0 serves from the head; an
   * offset more than 10 beyond the tail ("in the future") or more than
   * MAX_QUEUE_EVENTS below the head ("in the past") is ignored and the queue
   * is served from its head, confirming nothing; any other offset confirms
   * every update below it. Expired updates are gone first (TQueue::get drops
   * those whose expires_at < now).
   */
  private available(offset: number, limit: number): Update[] {
    this.dropExpired();
    if (offset < 0) this.updates = this.updates.slice(offset);
    const head = this.updates[0]?.update_id ?? this.nextUpdateId;
    const ignored = offset <= 0 || offset > this.nextUpdateId + FUTURE_SLACK || offset < head - MAX_QUEUE_EVENTS;
    if (!ignored) this.confirm(offset);
    return this.updates.slice(0, limit);
  }

  private dropExpired(): void {
    const now = this.unixNow();
    this.updates = this.updates.filter((update) => (this.expiresAt.get(update.update_id) ?? Infinity) >= now);
  }

  private dropAll(): void {
    this.updates = [];
  }

  private hand(updates: Update[]): Update[] {
    const at = Date.now();
    for (const update of updates) this.handed.set(update.update_id, [...(this.handed.get(update.update_id) ?? []), at]);
    return updates;
  }

  private enqueue(message: Record<string, unknown>): void {
    const now = this.now();
    if (this.lastUpdateAt !== undefined && now - this.lastUpdateAt >= QUIET_WEEK_MS) this.nextUpdateId = this.pickUpdateId();
    this.lastUpdateAt = now;
    const updateId = this.nextUpdateId++;
    this.expiresAt.set(updateId, (typeof message.date === 'number' ? message.date : this.unixNow()) + UPDATE_LIFETIME_S);
    this.updates.push({ update_id: updateId, message });
    const poll = this.poll;
    if (!poll) return;
    const ready = this.available(poll.offset, poll.limit);
    if (ready.length === 0) return;
    this.poll = undefined;
    clearTimeout(poll.timer);
    poll.answer(200, { ok: true, result: this.hand(ready) });
  }

  private sendMessage(
    params: Record<string, unknown>,
    ok: (result: unknown) => void,
    fail: (code: number, description: string, parameters?: Record<string, unknown>) => void,
  ): void {
    const state = this.checkChat(params, fail);
    if (!state) return;
    const text = typeof params.text === 'string' ? params.text : params.text === undefined ? '' : String(params.text);
    const parseMode = typeof params.parse_mode === 'string' ? params.parse_mode : undefined;
    // Client::get_formatted_text takes markdown, markdownv2 and html (any case); the fake knows only "HTML" and
    // refuses the rest as the server refuses an unknown mode ("Unsupported parse_mode", first letter lowered).
    let parsed: { text: string; entities: Entity[] };
    if (parseMode === 'HTML') {
      const result = parseTelegramHtml(text);
      if (!result.ok) return fail(400, `Bad Request: can't parse entities: ${result.error}`);
      parsed = result;
    } else if (parseMode === undefined) {
      parsed = { text, entities: [] };
    } else {
      return fail(400, `Bad Request: unsupported parse_mode`);
    }
    // Client::get_input_message_text: an empty `text` is "Message text is empty" (td's fix_formatted_text says "Text must
    // be non-empty" for text that is blank after parsing: not modelled). td MessageContent.cpp: "Message is too long".
    if (parsed.text.trim() === '') return fail(400, 'Bad Request: message text is empty');
    if ([...parsed.text].length > MAX_TEXT_CODE_POINTS) return fail(400, 'Bad Request: message is too long');
    const thread = optionalInt(params.message_thread_id);
    if (thread !== undefined && !this.threadExists(state, thread)) return fail(400, 'Bad Request: message thread not found');
    const replyParameters = params.reply_parameters as { message_id?: unknown; allow_sending_without_reply?: unknown } | undefined;
    const replyTo = optionalInt(replyParameters?.message_id);
    // Client::check_reply_parameters: "message to be replied not found" unless allow_sending_without_reply.
    if (replyTo !== undefined && !state.messages.has(replyTo) && replyParameters?.allow_sending_without_reply !== true) {
      return fail(400, 'Bad Request: message to be replied not found');
    }
    const messageId = state.nextMessageId++;
    state.messages.add(messageId);
    const sent: SentMessage = {
      chatId: state.chat.id,
      messageId,
      threadId: thread,
      text: parsed.text,
      raw: text,
      parseMode,
      entities: parsed.entities,
      replyTo: replyTo !== undefined && state.messages.has(replyTo) ? replyTo : undefined,
      at: Date.now(),
    };
    this.sent.push(sent);
    for (const listener of this.sendListeners) listener(sent);
    // Bot API docs, sendMessage: "the sent Message is returned" (Client::JsonMessage: message_thread_id and is_topic_message for a topic).
    ok({
      message_id: messageId,
      ...(thread !== undefined ? { message_thread_id: thread, is_topic_message: true } : {}),
      from: this.bot,
      chat: state.chat,
      date: this.unixNow(),
      text: parsed.text,
      ...(parsed.entities.length > 0 ? { entities: parsed.entities } : {}),
    });
  }

  /**
   * The chat a call names, or the error Telegram gives; 429 while throttled. Texts from Client::check_chat
   * ("chat not found") and Client::check_chat_access (migrated group with `migrate_to_chat_id`, kicked, deactivated);
   * "bot was blocked by the user" is USER_IS_BLOCKED in Client::fail_query_with_error. The 429 comes before
   * the access checks here; the real server gets it from Telegram when it sends, after them.
   */
  private checkChat(
    params: Record<string, unknown>,
    fail: (code: number, description: string, parameters?: Record<string, unknown>) => void,
  ): ChatState | undefined {
    const id = optionalInt(params.chat_id);
    const state = id === undefined ? undefined : this.chats.get(id);
    if (!state) return void fail(400, 'Bad Request: chat not found');
    const until = Math.max(this.throttles.get(state.chat.id) ?? 0, this.throttles.get('all') ?? 0);
    if (until > Date.now()) {
      const retryAfter = Math.max(1, Math.ceil((until - Date.now()) / 1000));
      return void fail(429, `Too Many Requests: retry after ${retryAfter}`, { retry_after: retryAfter });
    }
    if (state.migratedTo !== undefined) {
      return void fail(400, 'Bad Request: group chat was upgraded to a supergroup chat', { migrate_to_chat_id: state.migratedTo });
    }
    switch (state.blocked) {
      case 'blocked':
        return void fail(403, 'Forbidden: bot was blocked by the user');
      case 'kicked':
        return void fail(403, `Forbidden: bot was kicked from the ${state.chat.type === 'supergroup' ? 'supergroup' : 'group'} chat`);
      case 'deactivated':
        return void fail(403, 'Forbidden: user is deactivated');
      case undefined:
        return state;
    }
  }

  private threadExists(state: ChatState, thread: number): boolean {
    // The General topic (1) takes no thread id (Client::check_message_topic). Outside forums there are no topics: the
    // server before Oct 2025 refused a thread id there ("message thread not found" / "… is not a forum topic thread",
    // TdOnCheckMessageThreadCallback); since bf8b907 (Client::check_message_topic) it ignores it,
    // and private chats of bots with topics take one (Bot API docs, sendMessage) — both not modelled.
    return state.chat.is_forum === true && state.topics.has(thread);
  }

  private chatState(chatId: number): ChatState {
    const state = this.chats.get(chatId);
    if (!state) throw new Error(`the fake has no chat ${chatId}`);
    return state;
  }

  /** Query.cpp JsonQueryError: `{ok: false, error_code, description, parameters?}`, the HTTP status equal to error_code (Query::set_error). */
  private error(res: ServerResponse, code: number, description: string, parameters?: Record<string, unknown>): void {
    this.reply(res, code, { ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) });
  }

  private trickle(res: ServerResponse, status: number, body: unknown, ms: number): void {
    if (res.writableEnded || res.destroyed) return;
    const text = Buffer.from(JSON.stringify(body));
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(text.length) });
    res.write(text.subarray(0, text.length - 1));
    setTimeout(() => {
      if (!res.destroyed) res.end(text.subarray(text.length - 1));
    }, ms).unref();
  }

  private reply(res: ServerResponse, status: number, body: unknown): void {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  /** The fake's clock (ms): real time plus what `advanceClock` added. */
  private now(): number {
    return Date.now() + this.clockOffsetMs;
  }

  private unixNow(): number {
    return Math.floor(this.now() / 1000);
  }
}

/** Not the real encoding (td packs the file's type, location and access hash): a look-alike start per type. */
const FILE_ID_PREFIX = { photos: 'AgACAgIAAxkBAAI', voice: 'AwACAgIAAxkBAAI', documents: 'BQACAgIAAxkBAAI' } as const;

/** Client::json_store_file: file_id, file_unique_id, file_size (when known). */
function fileFields(file: FakeFile): Record<string, unknown> {
  return { file_id: file.fileId, file_unique_id: file.fileUniqueId, file_size: file.bytes.length };
}

/** Client::JsonPhotoSize: the file's fields, then width and height. */
function photoSize(file: FakeFile, width: number, height: number): Record<string, unknown> {
  return { ...fileFields(file), width, height };
}

/** Bot API docs, Message: `caption`, and `caption_entities` (mentions, commands) as `entities` are for `text`. */
function captioned(options: { caption?: string; captionEntities?: Entity[] }): Record<string, unknown> {
  return {
    ...(options.caption !== undefined ? { caption: options.caption } : {}),
    ...(options.captionEntities !== undefined ? { caption_entities: options.captionEntities } : {}),
  };
}

function threaded(threadId: number | undefined): { threadId?: number } {
  return threadId === undefined ? {} : { threadId };
}

/** Bot API docs, "Making requests": the query string, application/x-www-form-urlencoded or application/json (multipart not modelled). */
function parseParams(req: IncomingMessage, body: string, url: URL): Record<string, unknown> {
  const type = req.headers['content-type'] ?? '';
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
  if (body === '') return params;
  if (type.includes('application/json')) {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    return { ...params, ...(parsed as Record<string, unknown>) };
  }
  if (type.includes('application/x-www-form-urlencoded')) return { ...params, ...Object.fromEntries(new URLSearchParams(body)) };
  throw new Error(`unsupported content type ${type}`);
}

function optionalInt(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return Number(value);
  return undefined;
}

// ---- Telegram's HTML parse mode ------------------------------------------
// td/telegram/MessageEntity.cpp `parse_html`; its tags tg-emoji and tg-time are not modelled.

const TAGS: Record<string, string> = {
  b: 'bold',
  strong: 'bold',
  i: 'italic',
  em: 'italic',
  u: 'underline',
  ins: 'underline',
  s: 'strikethrough',
  strike: 'strikethrough',
  del: 'strikethrough',
  code: 'code',
  pre: 'pre',
  a: 'text_link',
  'tg-spoiler': 'spoiler',
  span: 'spoiler',
  blockquote: 'blockquote',
};
/** td MessageEntity.cpp decode_html_entity: only these four named entities, and numeric ones. */
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

type HtmlResult = { ok: true; text: string; entities: Entity[] } | { ok: false; error: string };

/**
 * Telegram's HTML: the tags above (a span only as `class="tg-spoiler"`, `a`
 * with `href`, `code` inside `pre` with `class="language-…"`), the four named
 * entities and numeric ones; a `<` or `&` that starts nothing valid is an
 * error, as is a tag left open or closed out of order. Entity offsets and
 * lengths in UTF-16 units.
 * Error texts are td's parse_html ones where td has that error. Stricter than td: td keeps a `&` that
 * starts no entity, an unknown entity and a lone `>` as text, takes `<a>`
 * without href (the text is the URL), single-quoted and bare attribute values,
 * and `</>` as any end tag; here those are errors.
 */
export function parseTelegramHtml(html: string): HtmlResult {
  let text = '';
  const entities: Entity[] = [];
  const open: { tag: string; start: number; url?: string; language?: string; inPre?: boolean }[] = [];
  const byteOffset = (index: number) => Buffer.byteLength(html.slice(0, index));
  let i = 0;
  while (i < html.length) {
    const char = html[i]!;
    if (char === '<') {
      const end = html.indexOf('>', i);
      if (end < 0) return { ok: false, error: `Unclosed start tag at byte offset ${byteOffset(i)}` };
      const inner = html.slice(i + 1, end);
      if (inner.startsWith('/')) {
        const name = inner.slice(1).trim().toLowerCase();
        const top = open.pop();
        if (!top) return { ok: false, error: `Unexpected end tag at byte offset ${byteOffset(i)}` };
        if (top.tag !== name) return { ok: false, error: `Unmatched end tag at byte offset ${byteOffset(i)}, expected "</${top.tag}>", found "</${name}>"` };
        const length = text.length - top.start;
        // `<pre><code class="language-x">` is one pre entity with a language, as Telegram reports it.
        if (length > 0 && !top.inPre) {
          entities.push({
            type: TAGS[top.tag]!,
            offset: top.start,
            length,
            ...(top.url !== undefined ? { url: top.url } : {}),
            ...(top.language !== undefined ? { language: top.language } : {}),
          });
        }
      } else {
        const tag = /^([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z-]+\s*=\s*"[^"]*")*)\s*$/.exec(inner);
        if (!tag) return { ok: false, error: `Unsupported start tag "${inner.split(/\s/)[0]}" at byte offset ${byteOffset(i)}` };
        const name = tag[1]!.toLowerCase();
        if (!(name in TAGS)) return { ok: false, error: `Unsupported start tag "${name}" at byte offset ${byteOffset(i)}` };
        const attributes = new Map([...tag[2]!.matchAll(/([a-zA-Z-]+)\s*=\s*"([^"]*)"/g)].map((m) => [m[1]!.toLowerCase(), decodeEntities(m[2]!)]));
        if (name === 'span' && attributes.get('class') !== 'tg-spoiler') {
          return { ok: false, error: `Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(i)}` };
        }
        const entry: { tag: string; start: number; url?: string; language?: string; inPre?: boolean } = { tag: name, start: text.length };
        if (name === 'a') {
          const href = attributes.get('href');
          if (!href) return { ok: false, error: `Tag "a" must have attribute "href" at byte offset ${byteOffset(i)}` };
          entry.url = href;
        }
        if (name === 'code' && open.at(-1)?.tag === 'pre') {
          const language = /^language-(.+)$/.exec(attributes.get('class') ?? '')?.[1];
          if (language) open.at(-1)!.language = language;
          entry.inPre = true;
        }
        open.push(entry);
      }
      i = end + 1;
      continue;
    }
    if (char === '&') {
      const entity = /^&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]+);/.exec(html.slice(i, i + 12));
      if (!entity) return { ok: false, error: `Character entity expected at byte offset ${byteOffset(i)}` };
      const decoded = decodeEntity(entity[1]!);
      if (decoded === undefined) return { ok: false, error: `Unsupported HTML entity "${entity[0]}" at byte offset ${byteOffset(i)}` };
      text += decoded;
      i += entity[0].length;
      continue;
    }
    if (char === '>') return { ok: false, error: `Unexpected ">" at byte offset ${byteOffset(i)}` };
    text += char;
    i++;
  }
  const left = open.pop();
  if (left) return { ok: false, error: `Can't find end tag corresponding to start tag "${left.tag}"` };
  return { ok: true, text, entities: entities.sort((a, b) => a.offset - b.offset) };
}

function decodeEntity(body: string): string | undefined {
  if (body.startsWith('#x') || body.startsWith('#')) {
    const code = body.startsWith('#x') ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
    return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : undefined;
  }
  return NAMED[body.toLowerCase()];
}

function decodeEntities(value: string): string {
  return value.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]+);/g, (whole, body: string) => decodeEntity(body) ?? whole);
}
