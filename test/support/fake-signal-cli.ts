import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { DownloadHold } from './download-hold';

/**
 * A fake signal-cli daemon (`signal-cli -a NUMBER daemon --tcp 127.0.0.1:PORT`)
 * with the Signal server's queue behind it, speaking signal-cli's real JSON-RPC
 * 2.0 line protocol. Every behaviour cites its source in
 * test/fixtures/signal-cli.md (signal-cli's man pages and its Java source);
 * the numbers [n] below refer to that file's list.
 *
 * - One JSON object per line each way [1]; each request is answered on its own,
 *   so a `receive` that waits does not hold up a `send` [2]; a line that is not
 *   JSON gets a -32700 error with id null [3]; an unknown method -32601 [4].
 * - The Signal server keeps messages for the linked device in a queue
 *   (`queue`) until signal-cli takes them [5]. Taking one acknowledges it to the
 *   server and signal-cli keeps no copy once handed on [6]: a message taken
 *   for a connection that is gone by the time its answer is written is lost
 *   (`lost`).
 * - `receiveMode: 'manual'` (`--receive-mode manual`): messages are taken only
 *   while a connection is subscribed (`subscribeReceive`, each message a
 *   `{subscription, result}` notification; the subscription ends with the
 *   connection) [17], or by the `receive` method `{timeout, maxMessages}` [7],
 *   which answers with a list of `{envelope, account}` [8]; a second `receive`
 *   while one runs is refused [9]. `'on-start'` (the default of the real daemon): every message
 *   is taken at once and pushed as a `receive` notification to each connected
 *   client, and to nobody when none is connected [10]; `receive` is refused [9].
 * - `send` {recipient | groupId, message, textStyle, quoteTimestamp,
 *   quoteAuthor} → `{timestamp, results}` [11]; its errors: -1 user errors
 *   (unregistered, empty, bad text style, quote without author, group not
 *   found), -4 untrusted identity, -5 rate limit with retryAfterSeconds [12].
 * - `sendTyping`, `version`, `getUserStatus`, `listGroups` [13].
 * - Attachments (issue 38; signal-cli at c26e0632, paths from its repository
 *   root): a person's message may carry files. The daemon downloads each one
 *   before it hands the message on (lib/…/helper/IncomingMessageHandler.java
 *   line 925) and keeps it in its data directory under its id, the remote id
 *   sanitized to `[A-Za-z0-9_.-]` plus an extension from the file name or the
 *   type (lib/…/storage/AttachmentStore.java `getAttachmentFile`,
 *   `sanitizeId`; lib/…/util/MimeUtils.java `guessExtensionFromMimeType`); the
 *   message lists them as `dataMessage.attachments`, each
 *   `{contentType, filename, id, size, width, height, caption,
 *   uploadTimestamp}` with absent values as null (src/…/json/JsonAttachment.java;
 *   the list is left out when empty, JsonDataMessage NON_NULL), and a message
 *   without text has `message: null` (JsonDataMessage `body().orElse(null)`).
 *   `getAttachment {id}` (src/…/commands/GetAttachmentCommand.java) sanitizes
 *   the id as the store does (AttachmentStore.retrieveAttachment) and answers
 *   `{data: <base64>}` (JsonAttachmentData), or -1 "Could not find attachment
 *   with ID: <id>" for a file it does not have, -1 "Missing attachment id
 *   parameter" without an id (since 0.14.2) [4]. The fake keeps the bytes
 *   (`attachments`), logs every `getAttachment` (`downloads`), and can hold
 *   the answers (`holdDownloads`) or lose a file (`forgetAttachment`, as a
 *   daemon started with `--ignore-attachments` never has it).
 *
 * Listens on 127.0.0.1 only; every socket has an error handler; a line longer
 * than 1 MiB from a client closes that client (signal-cli reads lines with no
 * limit; the fake is stricter so a runaway client cannot fill its memory).
 */

export interface FakeSignalPerson {
  readonly name: string;
  readonly number: string;
  readonly uuid: string;
}

export interface FakeSignalGroup {
  readonly id: string;
  readonly name: string;
  readonly members: FakeSignalPerson[];
}

/** A message the account sent (as its people see it). */
export interface FakeSignalSent {
  readonly timestamp: number;
  readonly at: number;
  /** The person's number for a direct message, else undefined. */
  readonly to: string | undefined;
  readonly groupId: string | undefined;
  readonly message: string;
  readonly textStyle: readonly string[];
  readonly quote: { readonly timestamp: number; readonly author: string } | undefined;
}

export interface FakeSignalRequest {
  readonly method: string;
  readonly params: Record<string, unknown>;
  readonly at: number;
  /** The error code it was answered with, if any (undefined while unanswered or on success). */
  error?: number;
}

interface Queued {
  readonly timestamp: number;
  readonly item: Record<string, unknown>;
}

/** A file a person sends (FakeSignalCli.userSays `attachments`). */
export interface FakeSignalFile {
  readonly bytes: Buffer;
  readonly mime: string;
  /** The sender's file name (Signal's apps send none for a photo taken or a voice note). */
  readonly name?: string;
  readonly caption?: string;
  readonly width?: number;
  readonly height?: number;
}

/** One `getAttachment` the daemon was asked, and what it answered. */
export interface FakeSignalDownload {
  readonly id: string;
  readonly at: number;
  status: 'held' | 'served' | 'not-found' | 'missing-id';
}

type Fault = { kind: 'rate-limit'; retryAfterSeconds: number } | { kind: 'untrusted' } | { kind: 'hang' } | { kind: 'io' };

const MAX_LINE = 1024 * 1024;

export class FakeSignalCli {
  readonly account: FakeSignalPerson;
  /** Signal's queue for this linked device, oldest first. */
  readonly queue: Queued[] = [];
  readonly sent: FakeSignalSent[] = [];
  readonly requests: FakeSignalRequest[] = [];
  /** Message timestamp → every time it was handed to a client. */
  readonly handed = new Map<number, number[]>();
  /** Timestamps of messages taken from the queue and handed to nobody. */
  readonly lost: number[] = [];
  readonly typing: { to: string | undefined; groupId: string | undefined; stop: boolean; at: number }[] = [];
  receiveMode: 'manual' | 'on-start';
  version = '0.13.22';
  private readonly people = new Map<string, FakeSignalPerson>();
  private readonly unregistered = new Set<string>();
  private readonly groups = new Map<string, FakeSignalGroup>();
  private readonly clients = new Set<Socket>();
  private readonly faults: Fault[] = [];
  private readonly untrusted = new Set<string>();
  private readonly waiting = new Set<() => void>();
  private readonly sendListeners = new Set<(sent: FakeSignalSent) => void>();
  private hangs: (() => void)[] = [];
  /** The files the daemon downloaded, by attachment id. */
  readonly attachments = new Map<string, Buffer>();
  readonly downloads: FakeSignalDownload[] = [];
  /** While set, `getAttachment` answers wait here (holdDownloads). */
  private readonly downloadHold = new DownloadHold();
  private server: Server | undefined;
  private unixServer: Server | undefined;
  private receiving = false;
  /** Manual mode: the connections subscribed with subscribeReceive, and their subscription ids [17]. */
  private readonly subscribed = new Map<Socket, number>();
  private nextSubscription = 0;
  private lastTimestamp = 0;
  private boundPort = 0;

  constructor(options: { receiveMode?: 'manual' | 'on-start' } = {}) {
    this.receiveMode = options.receiveMode ?? 'manual';
    this.account = { name: 'Homing', number: '+15550000001', uuid: randomUUID() };
  }

  get port(): number {
    return this.boundPort;
  }

  get address(): string {
    return `tcp://127.0.0.1:${this.boundPort}`;
  }

  get connectedClients(): number {
    return this.clients.size;
  }

  async start(port = 0): Promise<this> {
    const server = createServer((socket) => this.accept(socket));
    server.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.boundPort = (server.address() as { port: number }).port;
    return this;
  }

  /** Also listens on a UNIX socket (`--socket PATH`): the same line protocol [1]. */
  async listenUnix(path: string): Promise<void> {
    const server = createServer((socket) => this.accept(socket));
    server.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.unixServer = server;
  }

  /** The daemon goes away (every client cut); the Signal server's queue stays. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    const unixServer = this.unixServer;
    this.unixServer = undefined;
    if (unixServer) await new Promise<void>((resolve) => unixServer.close(() => resolve()));
    for (const socket of this.clients) socket.destroy();
    this.clients.clear();
    for (const release of this.hangs.splice(0)) release();
    this.downloadHold.releaseAll();
    this.wake();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  // ---- the world -------------------------------------------------------

  addPerson(name: string, options: { registered?: boolean } = {}): FakeSignalPerson {
    const number = `+1555${String(1000000 + this.people.size + 1).slice(1)}`;
    const person = { name, number, uuid: randomUUID() };
    this.people.set(number, person);
    if (options.registered === false) this.unregistered.add(number);
    return person;
  }

  addGroup(name: string, members: FakeSignalPerson[]): FakeSignalGroup {
    // A group v2 id: 32 random bytes in base64 (signal-cli GroupIdV2.toBase64) [14].
    const group = { id: randomBytes(32).toString('base64'), name, members: [...members] };
    this.groups.set(group.id, group);
    return group;
  }

  /** The person's identity key changed and is not trusted: sends to them fail with -4 [12]. */
  distrust(person: FakeSignalPerson): void {
    this.untrusted.add(person.number);
  }

  /**
   * A person writes; the message waits in Signal's queue for the linked device
   * [5]. `mentionBot` puts U+FFFC with a mention range of the account [15];
   * `quote` quotes a message by its timestamp and author [15].
   */
  userSays(options: {
    from: FakeSignalPerson;
    text: string;
    group?: FakeSignalGroup;
    mentionBot?: boolean;
    quote?: { timestamp: number; author: FakeSignalPerson };
    /** Files with the message (downloaded by the daemon as it takes the message; the text may be ''). */
    attachments?: readonly FakeSignalFile[];
    /** Entries of `dataMessage.attachments` as given, after the files' (hostile input). */
    rawAttachments?: readonly unknown[];
  }): { timestamp: number; attachmentIds: string[] } {
    const timestamp = this.nextTimestamp();
    const body = options.mentionBot ? `\uFFFC ${options.text}` : options.text;
    const files = (options.attachments ?? []).map((file) => this.store(file, timestamp));
    const listed = [...files.map((file) => file.json), ...(options.rawAttachments ?? [])];
    const dataMessage: Record<string, unknown> = {
      timestamp,
      message: body === '' ? null : body,
      expiresInSeconds: 0,
      viewOnce: false,
      ...(options.mentionBot ? { mentions: [{ name: this.account.number, number: this.account.number, uuid: this.account.uuid, start: 0, length: 1 }] } : {}),
      ...(options.quote
        ? { quote: { id: options.quote.timestamp, author: options.quote.author.number, authorNumber: options.quote.author.number, authorUuid: options.quote.author.uuid, text: '', attachments: [] } }
        : {}),
      ...(listed.length > 0 ? { attachments: listed } : {}),
      ...(options.group ? { groupInfo: { groupId: options.group.id, groupName: options.group.name, revision: 1, type: 'DELIVER' } } : {}),
    };
    this.enqueue(timestamp, this.envelope(options.from, timestamp, { dataMessage }));
    return { timestamp, attachmentIds: files.map((file) => file.id) };
  }

  /**
   * From now on `getAttachment` answers wait (the request is read and logged,
   * nothing is written) until the returned function is called or the daemon stops.
   */
  holdDownloads(): () => void {
    return this.downloadHold.hold();
  }

  /** signal-cli no longer has the file (deleted from its data directory, or never downloaded). */
  forgetAttachment(id: string): void {
    this.attachments.delete(id);
  }

  /** The daemon downloads a file as it takes its message: kept under its id, listed as JsonAttachment. */
  private store(file: FakeSignalFile, timestamp: number): { id: string; json: Record<string, unknown> } {
    // A CDN key (base64url) as the remote id, sanitized, plus the extension (AttachmentStore.getAttachmentFile).
    const remoteId = sanitizeId(randomBytes(15).toString('base64url'));
    const dot = file.name?.lastIndexOf('.') ?? -1;
    const extension = file.name !== undefined && dot !== -1 ? file.name.slice(dot + 1) : MIME_EXTENSIONS[file.mime];
    const id = extension !== undefined ? `${remoteId}.${extension}` : remoteId;
    // Stored under the id as built (its extension unsanitized); getAttachment looks up the sanitized id it is asked for.
    this.attachments.set(id, Buffer.from(file.bytes));
    return {
      id,
      json: {
        contentType: file.mime,
        filename: file.name ?? null,
        id,
        size: file.bytes.length,
        width: file.width ?? null,
        height: file.height ?? null,
        caption: file.caption ?? null,
        uploadTimestamp: timestamp - 1,
      },
    };
  }

  /** A delivery receipt from a person: queued like any envelope, with no data message [16]. */
  receipt(from: FakeSignalPerson, forTimestamp: number): void {
    const timestamp = this.nextTimestamp();
    this.enqueue(timestamp, this.envelope(from, timestamp, { receiptMessage: { when: timestamp, isDelivery: true, isRead: false, isViewed: false, timestamps: [forTimestamp] } }));
  }

  /** The account's messages as a person (or a group) sees them, oldest first. */
  sentTo(where: FakeSignalPerson | FakeSignalGroup): FakeSignalSent[] {
    return 'number' in where ? this.sent.filter((sent) => sent.to === where.number) : this.sent.filter((sent) => sent.groupId === where.id);
  }

  onSend(listener: (sent: FakeSignalSent) => void): () => void {
    this.sendListeners.add(listener);
    return () => this.sendListeners.delete(listener);
  }

  /** The next `count` sends fail with a rate limit [12]. */
  rateLimitNext(count: number, retryAfterSeconds: number): void {
    for (let i = 0; i < count; i++) this.faults.push({ kind: 'rate-limit', retryAfterSeconds });
  }

  /** The next `count` sends fail with an I/O error (-3): signal-cli could not reach Signal [12]. */
  failNextSends(count: number): void {
    for (let i = 0; i < count; i++) this.faults.push({ kind: 'io' });
  }

  /**
   * The next send reaches Signal (the person sees it) but its answer is not
   * written until the returned function is called (or the daemon stops).
   */
  hangNextSend(): () => void {
    this.faults.push({ kind: 'hang' });
    return () => {
      for (const release of this.hangs.splice(0)) release();
    };
  }

  // ---- the daemon ------------------------------------------------------

  private nextTimestamp(): number {
    this.lastTimestamp = Math.max(Date.now(), this.lastTimestamp + 1);
    return this.lastTimestamp;
  }

  private envelope(from: FakeSignalPerson, timestamp: number, content: Record<string, unknown>): Record<string, unknown> {
    // JsonMessageEnvelope's fields [8], JsonReceiveMessageHandler's {envelope, account} [8].
    return {
      envelope: {
        source: from.number,
        sourceNumber: from.number,
        sourceUuid: from.uuid,
        sourceName: from.name,
        sourceDevice: 1,
        timestamp,
        serverReceivedTimestamp: timestamp + 1,
        serverDeliveredTimestamp: timestamp + 2,
        ...content,
      },
      account: this.account.number,
    };
  }

  private enqueue(timestamp: number, item: Record<string, unknown>): void {
    this.queue.push({ timestamp, item });
    this.pushAll();
    this.wake();
  }

  private wake(): void {
    for (const waiter of [...this.waiting]) waiter();
  }

  /**
   * The daemon's receive thread: in automatic mode it takes every queued
   * message at once and tells every connected client, in a notification
   * without a subscription [10]; in manual mode it runs only while a
   * connection is subscribed, and tells the subscribers, each notification
   * wrapped as `{subscription, result}` [17]. A message taken for a client
   * whose connection is gone is lost [6].
   */
  private pushAll(): void {
    if (!this.server) return;
    if (this.receiveMode === 'manual' && this.subscribed.size === 0) return;
    while (this.queue.length > 0) {
      const next = this.queue.shift()!;
      let written = false;
      if (this.receiveMode === 'on-start') {
        for (const socket of this.clients) written = this.write(socket, { jsonrpc: '2.0', method: 'receive', params: next.item }) || written;
      } else {
        for (const [socket, subscription] of this.subscribed) written = this.write(socket, { jsonrpc: '2.0', method: 'receive', params: { subscription, result: next.item } }) || written;
      }
      if (written) this.markHanded(next.timestamp);
      else this.lost.push(next.timestamp);
    }
  }

  get subscribers(): number {
    return this.subscribed.size;
  }

  private markHanded(timestamp: number): void {
    const times = this.handed.get(timestamp) ?? [];
    times.push(Date.now());
    this.handed.set(timestamp, times);
  }

  private accept(socket: Socket): void {
    this.clients.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.clients.delete(socket);
      // The connection's subscriptions end with it (SignalJsonRpcDispatcherHandler.handleConnection) [17].
      this.subscribed.delete(socket);
    });
    let buffer = '';
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      if (buffer.length > MAX_LINE && !buffer.includes('\n')) {
        socket.destroy();
        return;
      }
      for (let newline = buffer.indexOf('\n'); newline !== -1; newline = buffer.indexOf('\n')) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        this.onLine(socket, line);
      }
    });
    if (this.receiveMode === 'on-start') setImmediate(() => this.pushAll());
  }

  private write(socket: Socket, message: unknown): boolean {
    if (socket.destroyed || !socket.writable) return false;
    socket.write(`${JSON.stringify(message)}\n`);
    return true;
  }

  private onLine(socket: Socket, line: string): void {
    if (line.trim() === '') {
      this.write(socket, { jsonrpc: '2.0', error: { code: -32700, message: 'Empty input line', data: null }, id: null });
      return;
    }
    let request: { id?: unknown; method?: unknown; params?: unknown };
    try {
      request = JSON.parse(line) as typeof request;
    } catch (error) {
      this.write(socket, { jsonrpc: '2.0', error: { code: -32700, message: (error as Error).message, data: null }, id: null });
      return;
    }
    if (typeof request !== 'object' || request === null || typeof request.method !== 'string') {
      this.write(socket, { jsonrpc: '2.0', error: { code: -32600, message: 'method field must be set', data: null }, id: null });
      return;
    }
    const params = typeof request.params === 'object' && request.params !== null ? (request.params as Record<string, unknown>) : {};
    const record: FakeSignalRequest = { method: request.method, params, at: Date.now() };
    this.requests.push(record);
    const id = request.id ?? null;
    const answer = (result: unknown) => this.write(socket, { jsonrpc: '2.0', result, id });
    const fail = (code: number, message: string, data: unknown = null) => {
      record.error = code;
      this.write(socket, { jsonrpc: '2.0', error: { code, message, data }, id });
    };
    // Each request on its own [2].
    void this.handle(socket, request.method, params, answer, fail);
  }

  private async handle(socket: Socket, method: string, params: Record<string, unknown>, answer: (result: unknown) => boolean, fail: (code: number, message: string, data?: unknown) => void): Promise<void> {
    switch (method) {
      case 'version':
        answer({ version: this.version });
        return;
      case 'getUserStatus': {
        const recipients = list(params.recipient);
        answer(
          recipients.map((recipient) => {
            const person = recipient === this.account.number ? this.account : this.people.get(recipient);
            const registered = person !== undefined && !this.unregistered.has(recipient);
            return { recipient, number: recipient, uuid: registered ? person.uuid : null, isRegistered: registered };
          }),
        );
        return;
      }
      case 'listGroups':
        answer(
          [...this.groups.values()].map((group) => ({
            id: group.id,
            name: group.name,
            description: '',
            isMember: true,
            isBlocked: false,
            messageExpirationTime: 0,
            members: [this.account, ...group.members].map((member) => ({ number: member.number, uuid: member.uuid })),
            pendingMembers: [],
            requestingMembers: [],
            admins: [],
            banned: [],
          })),
        );
        return;
      case 'sendTyping': {
        const groupId = list(params.groupId)[0];
        this.typing.push({ to: list(params.recipient)[0], groupId, stop: params.stop === true, at: Date.now() });
        answer({});
        return;
      }
      case 'receive':
        return this.receive(socket, params, answer, fail);
      case 'subscribeReceive': {
        const subscription = this.nextSubscription++;
        this.subscribed.set(socket, subscription);
        answer(subscription);
        setImmediate(() => this.pushAll());
        return;
      }
      case 'unsubscribeReceive': {
        const mine = this.subscribed.get(socket);
        if (mine === undefined || mine !== params.subscription) return fail(-1, 'Unknown subscription id');
        this.subscribed.delete(socket);
        answer({});
        return;
      }
      case 'send':
        return this.send(params, answer, fail);
      case 'getAttachment':
        return this.getAttachment(params, answer, fail);
      default:
        fail(-32601, 'Method not implemented');
    }
  }

  /** The `receive` method [7][8][9]: waits up to `timeout` s for messages, takes up to `maxMessages`. */
  private async receive(socket: Socket, params: Record<string, unknown>, answer: (result: unknown) => boolean, fail: (code: number, message: string) => void): Promise<void> {
    if (this.receiveMode !== 'manual' || this.receiving) {
      fail(-1, 'Receive command cannot be used if messages are already being received.');
      return;
    }
    const timeoutMs = (typeof params.timeout === 'number' ? params.timeout : 3) * 1000;
    // A timeout of 0 returns before reading anything from the server (ReceiveHelper: `if (timeoutMs <= 0L) return;`) [7].
    if (timeoutMs === 0) {
      answer([]);
      return;
    }
    this.receiving = true;
    try {
      const max = typeof params.maxMessages === 'number' && params.maxMessages > 0 ? params.maxMessages : Infinity;
      const taken: Queued[] = [];
      const deadline = Date.now() + timeoutMs;
      // A receive runs to its end even when its client went away: JsonRpcReader's executor waits for its tasks [2], and what it took is lost [6].
      while (taken.length < max && this.server) {
        const next = this.queue.shift();
        if (next) {
          // Taken from the server's queue: acknowledged, and signal-cli's copy is deleted once handled [6].
          taken.push(next);
          continue;
        }
        const left = deadline - Date.now();
        if (left <= 0) break;
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            this.waiting.delete(done);
            resolve();
          };
          const timer = setTimeout(done, left);
          this.waiting.add(done);
        });
      }
      const written = answer(taken.map((entry) => entry.item));
      for (const entry of taken) {
        if (written) this.markHanded(entry.timestamp);
        else this.lost.push(entry.timestamp);
      }
    } finally {
      this.receiving = false;
    }
  }

  /** `getAttachment {id}`: the file's bytes in base64, as GetAttachmentCommand answers (see the header). */
  private async getAttachment(params: Record<string, unknown>, answer: (result: unknown) => boolean, fail: (code: number, message: string) => void): Promise<void> {
    const id = typeof params.id === 'string' ? params.id : undefined;
    const download: FakeSignalDownload = { id: id ?? '', at: Date.now(), status: 'held' };
    this.downloads.push(download);
    await this.downloadHold.wait();
    if (id === undefined) {
      download.status = 'missing-id';
      return fail(-1, 'Missing attachment id parameter');
    }
    const bytes = this.attachments.get(sanitizeId(id));
    if (!bytes) {
      download.status = 'not-found';
      return fail(-1, `Could not find attachment with ID: ${id}`);
    }
    download.status = 'served';
    answer({ data: bytes.toString('base64') });
  }

  /** The `send` method [11][12]. */
  private async send(params: Record<string, unknown>, answer: (result: unknown) => boolean, fail: (code: number, message: string, data?: unknown) => void): Promise<void> {
    const recipients = list(params.recipient);
    const groupId = list(params.groupId)[0];
    if (recipients.length === 0 && groupId === undefined) return fail(-1, 'No recipients given');
    const message = typeof params.message === 'string' ? params.message : '';
    if (typeof params.quoteTimestamp === 'number' && typeof params.quoteAuthor !== 'string') return fail(-1, 'Quote author parameter is missing');
    if (message === '') return fail(-1, 'Sending empty message is not allowed, either a message, attachment or sticker must be given.');
    const textStyle = list(params.textStyle);
    for (const style of textStyle) {
      const match = /^(\d+):(\d+):(.+)$/.exec(style);
      if (!match) return fail(-1, `Invalid textStyle syntax (${style}) expected 'start:length:STYLE'`);
      if (!['NONE', 'BOLD', 'ITALIC', 'SPOILER', 'STRIKETHROUGH', 'MONOSPACE'].includes(match[3]!)) return fail(-1, `Invalid style: ${match[3]}`);
    }
    let group: FakeSignalGroup | undefined;
    if (groupId !== undefined) {
      group = this.groups.get(groupId);
      if (!group) return fail(-1, `Group not found: ${groupId}`);
    }
    const person = recipients[0] === undefined ? undefined : [...this.people.values()].find((entry) => entry.number === recipients[0] || entry.uuid === recipients[0]);
    if (!group && (!person || this.unregistered.has(person.number))) return fail(-1, `The user ${recipients[0]} is not registered.`);
    const timestamp = this.nextTimestamp();
    const address = person ? { uuid: person.uuid, number: person.number } : { uuid: null, number: null };
    const fault = this.faults.shift();
    if (fault?.kind === 'rate-limit') {
      const response = { timestamp, results: [{ recipientAddress: address, type: 'RATE_LIMIT_FAILURE', retryAfterSeconds: fault.retryAfterSeconds }] };
      return fail(-5, 'Failed to send message due to rate limiting', { response });
    }
    if (fault?.kind === 'io') return fail(-3, 'Failed to send message: Connection closed! (IOException)');
    if (person && this.untrusted.has(person.number)) {
      const response = { timestamp, results: [{ recipientAddress: address, type: 'IDENTITY_FAILURE' }] };
      return fail(-4, 'Failed to send message due to untrusted identities', { response });
    }
    const quote = typeof params.quoteTimestamp === 'number' ? { timestamp: params.quoteTimestamp, author: params.quoteAuthor as string } : undefined;
    const sent: FakeSignalSent = { timestamp, at: Date.now(), to: group ? undefined : person!.number, groupId: group?.id, message, textStyle, quote };
    this.sent.push(sent);
    for (const listener of this.sendListeners) listener(sent);
    const results = group
      ? group.members.map((member) => ({ recipientAddress: { uuid: member.uuid, number: member.number }, groupId: group.id, type: 'SUCCESS' }))
      : [{ recipientAddress: address, type: 'SUCCESS' }];
    if (fault?.kind === 'hang') await new Promise<void>((resolve) => this.hangs.push(resolve));
    answer({ timestamp, results });
  }
}

/** A parameter given as one value or a list (man signal-cli-jsonrpc(5), "Commands") [1]. */
function list(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
}

/** AttachmentStore.sanitizeId: every character outside `[A-Za-z0-9_.-]` becomes `_`. */
function sanitizeId(id: string): string {
  return id.replace(/[^A-Za-z0-9_.-]/g, '_');
}

/** MimeUtils.guessExtensionFromMimeType (the types it knows). */
const MIME_EXTENSIONS: Readonly<Record<string, string>> = {
  'application/vnd.android.package-archive': 'apk',
  'application/json': 'json',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/heic': 'heic',
  'image/heif': 'heif',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'audio/aac': 'aac',
  'video/mp4': 'mp4',
  'text/x-vcard': 'vcf',
  'text/plain': 'txt',
  'text/x-signal-plain': 'txt',
  'application/octet-stream': 'bin',
};
