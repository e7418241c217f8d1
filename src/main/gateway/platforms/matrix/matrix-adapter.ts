import { createHash, randomBytes } from 'node:crypto';
import { markdownToMatrixHtml } from '../../format/matrix-html';
import { markdownToPlainText } from '../../format/plain-text';
import type {
  AdapterEvent,
  AdapterState,
  MessageLimits,
  PlatformAdapter,
  SendResult,
  SendTarget,
  TypingTarget,
} from '../adapter';
import { MatrixClient, part, type CallResult, type MatrixFailure } from './client';
import { MediaFetchError, type MediaBody, type MediaOffer } from '../../media/media';
import { downloadMxc } from './media-download';
import type { MatrixConfig } from './config-schema';
import { events as readEvents, parseSync, readMessage, type InviteUpdate, type SyncBatch, type SyncEvent } from './inbound';
import { MatrixRooms, type RoomView } from './rooms';
import { MatrixSyncState, type TimelineGap } from './sync-state';
import { ReconnectBackoff } from '../backoff';
import { Admission, type AdmissionDecision } from '../skeleton/admission';
import { ReceiveLoop } from '../skeleton/receive-loop';
import { TypingRepeats } from '../skeleton/typing-repeats';
import { usualPairingTeller } from '../../access/pairing-replies';
import type { OwedCodes, PairingTeller } from '../../access/pairing-teller';
import { matrixIntake } from './intake';
import { AdapterSkeleton, type SkeletonOptions } from '../skeleton/skeleton';

/** Who may talk to the agent, and the pairing of new senders (access/pairing-store.ts implements it). */
export interface MatrixAccess extends OwedCodes {
  isApproved(senderId: string): boolean;
  requestPairing(sender: { readonly id: string; readonly chatId: string; readonly name: string | undefined }): { readonly code: string } | undefined;
}

/** How the bot logs in: a token (from Element, or an admin) or the account's password. */
export type MatrixCredentials = { readonly accessToken: string } | { readonly password: string };

export interface MatrixAdapterOptions extends SkeletonOptions {
  readonly config: MatrixConfig;
  readonly credentials: MatrixCredentials;
  /** Where the device id and the sync position are kept. */
  readonly dataDir: string;
  readonly access: MatrixAccess;
  readonly fetch?: typeof fetch;
  /** Interval between typing notices (each lasts 30 s; default 20 s). */
  readonly typingIntervalMs?: number;
  /** A retry-after longer than this is not waited out inside `send` but handed back to the ledger (default 120 s). */
  readonly maxInlineWaitMs?: number;
}

/**
 * The most a chunk of Markdown may weigh in UTF-8. The whole event must stay
 * within 65 536 bytes of canonical JSON (PLATFORMS.md); the content carries the
 * plain `body` and the HTML `formatted_body` beside it, each JSON-escaped, and
 * the server adds its envelope (ids, hashes, signatures: about 1 KB).
 */
export const MATRIX_CHUNK_BYTES = 16_000;
/** The content's own budget inside the event (the envelope takes the rest). */
const CONTENT_BUDGET_BYTES = 60_000;
/** Send tries inside one `send` (429 waits, the plain fallback after M_TOO_LARGE). */
const MAX_TRIES = 6;
const CALL_TIMEOUT_MS = 30_000;
/** The sync filter: enough timeline per room that a gap is rare (one is filled from /messages). */
const SYNC_FILTER = JSON.stringify({ room: { timeline: { limit: 100 }, state: { lazy_load_members: false } } });
/** The first sync of a connection: every room's state, hardly any timeline. */
const STATE_FILTER = JSON.stringify({ room: { timeline: { limit: 1 } } });
/** Events asked for per page of a gap: Synapse serves at most 1 000 (synapse/streams/config.py `MAX_LIMIT`). */
const GAP_PAGE_LIMIT = '100';
/**
 * How long Synapse remembers a txnId: every 5 minutes `_cleanup_old_transaction_ids`
 * (synapse/storage/databases/main/events_worker.py) deletes the
 * `event_txn_id_device_id` rows older than 24 hours; younger ones are kept.
 */
const SYNAPSE_TXN_ID_WINDOW_MS = 24 * 60 * 60 * 1000;
/**
 * Any other homeserver: the shortest window known. Dendrite keeps a txnId in
 * memory for 30 to 60 minutes (internal/transactions/transactions.go,
 * `DefaultCleanupPeriod`, two maps cycled); other servers' are not known here.
 */
const OTHER_SERVER_TXN_ID_WINDOW_MS = 30 * 60 * 1000;

/** How long a download waits for a password login to finish (a turn resumed at start can come before it). */
const MEDIA_LOGIN_WAIT_MS = 30_000;

/** The one message an encrypted room gets instead of silence. */
export const ENCRYPTED_NOTICE =
  '🔒 This room is end-to-end encrypted, and Homing cannot read encrypted messages yet, so it cannot answer here. Please write to it in a room without encryption (for a direct chat: start one with encryption turned off).';

interface Session {
  readonly token: string;
  readonly userId: string;
  readonly deviceId: string;
}

/**
 * Matrix over the client-server API with plain fetch: /sync long polling with
 * durable intake, sends as `PUT …/send/m.room.message/{txnId}`.
 *
 * Durable intake: the sync position (`since`) is saved only after every event
 * before it is saved by the pipeline; an event taken once (by event_id) is never
 * taken again, and the one in flight at a crash is checked against the transcript
 * when it comes again.
 *
 * Sending is idempotent on the server (`idempotentSends: true`): the txnId is the
 * chunk's idempotency key, the same on every resend and after a restart, and the
 * device id is kept across restarts (a txnId is scoped to its device), so a resend
 * of a chunk that arrived returns the first event and the room sees it once —
 * no "possible repeat" marker is needed, for as long as the server remembers the
 * txnId (`dedupWindowMs`); a resend later than that carries the marker.
 */
export class MatrixAdapter implements PlatformAdapter {
  readonly platform = 'matrix';
  readonly limits: MessageLimits = { maxLength: MATRIX_CHUNK_BYTES, unit: 'bytes' };
  readonly intake = matrixIntake;
  readonly idempotentSends = true;
  /** How long the homeserver remembers a txnId: known at each connection from the server's name (see `txnIdWindow`). */
  private txnIdWindowMs = OTHER_SERVER_TXN_ID_WINDOW_MS;

  /** Logger, clock, state and events, message hand-on, reconnect backoff: what every adapter holds (skeleton/). */
  private readonly skeleton: AdapterSkeleton;
  private readonly config: MatrixConfig;
  private readonly client: MatrixClient;
  private readonly loop: ReceiveLoop;
  private readonly admission: Admission;
  private session: Session | undefined;
  private syncState: MatrixSyncState | undefined;
  private rooms: MatrixRooms | undefined;
  /** When the homeserver lets us send again after a 429 (wall-clock ms). */
  private gateUntil = 0;
  private readonly typingRepeats = new TypingRepeats();
  /** Tells owed pairing codes, at most 20 per 10 minutes, and marks them told once sent. */
  private readonly pairingTeller: PairingTeller;
  /** Failed reads of a gap in a row, and when the next may start (monotonic ms): a flaky /messages is retried with backoff. */
  private readonly gapBackoff: ReconnectBackoff;
  private gapRetryAt = 0;

  constructor(private readonly options: MatrixAdapterOptions) {
    this.config = options.config;
    this.skeleton = new AdapterSkeleton('matrix', options);
    this.loop = new ReceiveLoop('matrix', this.skeleton.logger);
    this.gapBackoff = new ReconnectBackoff(options.reconnectDelayMs);
    this.admission = new Admission(this.config, options.access);
    this.pairingTeller = usualPairingTeller({
      platform: 'matrix',
      access: options.access,
      sendNotice: (chatId, text) => this.sendNotice(chatId, text),
      connected: () => this.canSend(),
      logger: this.skeleton.logger,
      now: () => this.skeleton.clock.monotonic(),
    });
    this.client = new MatrixClient(this.config.homeserver, options.fetch ?? fetch, () => this.skeleton.clock.now());
  }

  state(): AdapterState {
    return this.skeleton.status.state;
  }

  /**
   * A resend within this time of its reply's recording (which is before its
   * first send) is deduplicated by the homeserver; a later one carries the marker.
   * Read by the delivery side when the adapter says it is connected.
   */
  get dedupWindowMs(): number {
    return this.txnIdWindowMs;
  }

  /** The rooms the bot is in, with names, for the window. */
  listRooms(): RoomView[] {
    return this.rooms?.list() ?? [];
  }

  onEvent(listener: (event: AdapterEvent) => void): () => void {
    return this.skeleton.status.listen(listener);
  }

  canSend(): boolean {
    return this.session !== undefined && this.skeleton.status.up;
  }

  async connect(): Promise<void> {
    if (this.loop.running) return;
    this.skeleton.backoff.reset();
    this.loop.start(
      (generation) => this.run(generation),
      (words) => {
        this.session = undefined;
        this.setState('disconnected', `an unexpected error: ${words}`);
      },
    );
  }

  async disconnect(): Promise<void> {
    this.loop.stop();
    this.typingRepeats.stopAll();
    this.session = undefined;
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
      try {
        this.syncState ??= MatrixSyncState.forAccount(this.options.dataDir, this.config.homeserver, this.config.user, this.skeleton.logger);
      } catch (error) {
        this.loop.halt();
        this.setState('disconnected', `cannot keep Matrix's sync position in the data directory: ${describe(error)}`);
        return;
      }
      const login = await this.login();
      if (!alive()) return;
      if (!login.ok) {
        const failure = login.failure;
        if (failure.kind === 'unauthorized' || failure.kind === 'forbidden') {
          this.loop.halt();
          this.setState('auth-failed', this.loginWords(failure));
          return;
        }
        if (failure.kind === 'rate-limited') {
          await this.pause(failure.retryAfterMs, generation, false);
          continue;
        }
        await this.lost(`cannot reach the homeserver ${this.config.homeserver}: ${failure.description}`, generation);
        continue;
      }
      const session = login.value;
      const state = this.syncState;
      if (state.deviceId !== null && state.deviceId !== session.deviceId) {
        this.skeleton.logger.warn('matrix: logged in on a different device than before; a reply that was being sent when Homing stopped may show twice', {
          before: state.deviceId,
          now: session.deviceId,
        });
      }
      state.setIdentity(session.userId, session.deviceId);
      this.rooms = new MatrixRooms(session.userId, (roomId) => state.isDirect(roomId));
      // The rooms' state (names, encryption, members) from a sync of its own; its timeline is not taken.
      const initial = await this.syncOnce(session, undefined, STATE_FILTER, 0);
      if (!alive()) return;
      if (!initial.ok) {
        if (await this.afterSyncFailure(initial.failure, generation)) return;
        continue;
      }
      this.applyState(initial.value, true);
      // First run: history from before Homing was connected is not answered.
      if (state.since === null) state.advance(initial.value.nextBatch);
      this.session = session;
      this.skeleton.backoff.reset();
      const server = await this.serverName();
      if (!alive()) return;
      this.txnIdWindowMs = server === 'Synapse' ? SYNAPSE_TXN_ID_WINDOW_MS : OTHER_SERVER_TXN_ID_WINDOW_MS;
      this.skeleton.logger.info('matrix: connected', { user: session.userId, device: session.deviceId, server: server ?? 'unknown', txnIdWindowMinutes: this.txnIdWindowMs / 60_000 });
      this.setState('connected');
      this.roomsChanged();
      await this.takeInvites(initial.value.invites);
      const ended = await this.pollLoop(session, generation);
      if (ended === 'stopped') return;
    }
  }

  private async login(): Promise<CallResult<Session>> {
    const credentials = this.options.credentials;
    if ('accessToken' in credentials) {
      const whoami = await this.client.call<{ user_id?: unknown; device_id?: unknown }>('GET', 'v3/account/whoami', { token: credentials.accessToken, timeoutMs: CALL_TIMEOUT_MS });
      if (!whoami.ok) return whoami;
      const userId = whoami.value.user_id;
      if (typeof userId !== 'string' || !/^@[^\s:]+:\S+$/.test(userId)) return { ok: false, failure: { kind: 'unknown', description: 'whoami answered without a user id' } };
      // A token belongs to one device; old servers do not say which: the one we knew, else a name of our own.
      const deviceId = typeof whoami.value.device_id === 'string' ? whoami.value.device_id : (this.syncState?.deviceId ?? 'UNKNOWN');
      return { ok: true, value: { token: credentials.accessToken, userId, deviceId } };
    }
    const known = this.syncState?.deviceId ?? undefined;
    const answer = await this.client.call<{ access_token?: unknown; user_id?: unknown; device_id?: unknown }>('POST', 'v3/login', {
      body: {
        type: 'm.login.password',
        identifier: { type: 'm.id.user', user: this.config.user },
        password: credentials.password,
        // The same device as last time: txnIds of chunks sent before a restart stay in scope.
        ...(known ? { device_id: known } : {}),
        initial_device_display_name: this.config.deviceName,
      },
      timeoutMs: CALL_TIMEOUT_MS,
    });
    if (!answer.ok) return answer;
    const { access_token: token, user_id: userId, device_id: deviceId } = answer.value;
    if (typeof token !== 'string' || typeof userId !== 'string' || typeof deviceId !== 'string' || token === '' || deviceId === '') {
      return { ok: false, failure: { kind: 'unknown', description: 'the login answer lacks a token, user or device' } };
    }
    return { ok: true, value: { token, userId, deviceId } };
  }

  /**
   * The homeserver's software, from `GET /_matrix/federation/v1/version` (no token;
   * Synapse's FederationVersionServlet answers `{"server":{"name":"Synapse"}}`, on the
   * same listener as the client API in its default config). Unknown when a proxy
   * does not pass it on: then the shortest txnId window is assumed.
   */
  private async serverName(): Promise<string | undefined> {
    const answer = await this.client.call<{ server?: { name?: unknown } }>('GET', 'v1/version', { api: 'federation', timeoutMs: 10_000 });
    const name = answer.ok ? answer.value.server?.name : undefined;
    return typeof name === 'string' ? name.slice(0, 64) : undefined;
  }

  private loginWords(failure: MatrixFailure): string {
    if ('accessToken' in this.options.credentials) {
      return `the homeserver refused the access token (${failure.description}): it was revoked or has expired; store a new one in Platforms → Matrix`;
    }
    return `the homeserver refused the login of ${this.config.user} (${failure.description}): check the user and password in Platforms → Matrix`;
  }

  private async syncOnce(session: Session, since: string | undefined, filter: string, timeoutMs: number, signal?: AbortSignal): Promise<CallResult<SyncBatch>> {
    const answer = await this.client.call('GET', 'v3/sync', {
      token: session.token,
      query: { since, timeout: String(timeoutMs), filter },
      // The long poll plus a margin; a call that takes longer than this is a dead connection.
      timeoutMs: timeoutMs + 15_000,
      signal,
    });
    if (!answer.ok) return answer;
    const parsed = parseSync(answer.value, session.userId);
    if (!parsed.ok) return { ok: false, failure: { kind: 'unknown', description: parsed.error } };
    return { ok: true, value: parsed.batch };
  }

  /** True when the loop must stop (auth failed); otherwise it has waited and the caller tries again. */
  private async afterSyncFailure(failure: MatrixFailure, generation: number): Promise<boolean> {
    if (failure.kind === 'unauthorized') {
      if (!this.canLogInAgain()) {
        this.authFailed(failure);
        return true;
      }
      await this.lost(`the homeserver ended the bot's session (${failure.description}); logging in again`, generation);
      return false;
    }
    if (failure.kind === 'rate-limited') {
      await this.pause(failure.retryAfterMs, generation, false);
      return false;
    }
    await this.lost(`lost the homeserver: ${failure.description}`, generation);
    return false;
  }

  /**
   * With a password a refused token is only a session ended (an admin's logout, a
   * soft logout): log in again on the same device. A refused token of its own
   * is a login failure until a new one is stored.
   */
  private canLogInAgain(): boolean {
    return 'password' in this.options.credentials;
  }

  private authFailed(failure: MatrixFailure): void {
    this.loop.stop();
    this.session = undefined;
    this.setState('auth-failed', this.loginWords(failure));
  }

  private async lost(words: string, generation: number): Promise<void> {
    this.session = undefined;
    const delay = this.skeleton.backoff.next();
    this.setState('disconnected', words);
    await this.pause(delay, generation);
  }

  /** Polls until stopped, or until the connection must be set up again ('reconnect'). */
  private async pollLoop(session: Session, generation: number): Promise<'stopped' | 'reconnect'> {
    const alive = () => this.loop.alive(generation);
    const state = this.syncState!;
    while (alive()) {
      const signal = this.loop.pollSignal();
      const since = state.since ?? undefined;
      let answer: CallResult<SyncBatch>;
      try {
        answer = await this.syncOnce(session, since, SYNC_FILTER, this.pollTimeoutMs(), signal);
      } finally {
        this.loop.pollEnded(signal);
      }
      if (!alive()) return 'stopped';
      if (!answer.ok) {
        if (signal.aborted) continue; // probe(): poll again at once
        if (answer.failure.kind === 'unauthorized') {
          if (!this.canLogInAgain()) {
            this.authFailed(answer.failure);
            return 'stopped';
          }
          await this.lost(`the homeserver ended the bot's session (${answer.failure.description}); logging in again`, generation);
          return 'reconnect';
        }
        if (answer.failure.kind === 'rate-limited') {
          await this.pause(answer.failure.retryAfterMs, generation, false);
          continue;
        }
        if (answer.failure.kind === 'refused' && answer.failure.status === 400 && since !== undefined) {
          this.positionRefused(answer.failure.description);
          return 'reconnect';
        }
        await this.lost(`lost the homeserver: ${answer.failure.description}`, generation);
        return 'reconnect';
      }
      this.skeleton.backoff.reset();
      if (this.skeleton.status.state !== 'connected') this.setState('connected');
      const batch = answer.value;
      const taken = await this.takeBatch(session, batch, since, generation);
      if (!alive()) return 'stopped';
      if (taken === 'again') {
        // Not saved now (the gateway is stopping, the disk failed): sync again from the same position.
        await this.pause(1_000, generation);
        continue;
      }
      state.advance(batch.nextBatch);
    }
    return 'stopped';
  }

  /**
   * The homeserver refuses the saved position (Synapse: `400 Invalid stream
   * token`, types/__init__.py `StreamToken.from_string`): it is not the server
   * that gave it (replaced, or restored from an older backup). Asking again
   * would fail forever; Homing starts from now and says once that what was sent
   * meanwhile may not be answered (the position it refused is gone from the file).
   */
  private positionRefused(description: string): void {
    this.syncState!.forgetPosition();
    this.skeleton.logger.warn('matrix: the homeserver refused the saved sync position; going on from now', { error: description });
    this.skeleton.status.emit({
      type: 'intake-gap',
      text: `The Matrix homeserver no longer accepts Homing's saved place in its rooms (${description}): messages sent while Homing was away may not be answered.`,
    });
  }

  /** The long poll's wait: shorter while a gap waits for its next try, so the try is not held up by a quiet room. */
  private pollTimeoutMs(): number {
    const poll = this.config.pollTimeoutSeconds * 1000;
    if (this.syncState?.gaps.length === 0) return poll;
    return Math.min(poll, Math.max(0, Math.ceil(this.gapRetryAt - this.skeleton.clock.monotonic())));
  }

  /** Room state, invites and every timeline event of one sync; 'again' when one was not saved. */
  private async takeBatch(session: Session, batch: SyncBatch, since: string | undefined, generation: number): Promise<'done' | 'again'> {
    const state = this.syncState!;
    this.applyState(batch, false);
    await this.takeInvites(batch.invites);
    for (const roomId of batch.left) {
      this.rooms?.forget(roomId);
      state.closeGap(roomId);
      this.roomsChanged();
    }
    for (const room of batch.joined) {
      if (!this.loop.alive(generation)) return 'again';
      if (since !== undefined && (room.limited || state.hasGap(room.roomId))) {
        // Kept before the position moves on; the room's events are then read in order from /messages.
        state.openGap(room.roomId, since, newestEventId(room.timeline));
        continue;
      }
      if ((await this.takeTimeline(room.roomId, room.timeline)) === 'again') return 'again';
    }
    return this.readGaps(session, generation);
  }

  /** Room names, members, encryption, m.direct: from state and from the state events of timelines. */
  private applyState(batch: SyncBatch, initial: boolean): void {
    const rooms = this.rooms!;
    if (batch.direct) rooms.setDirect(batch.direct);
    let changed = batch.direct !== undefined;
    for (const room of batch.joined) {
      const wasEncrypted = rooms.isEncrypted(room.roomId);
      const known = rooms.has(room.roomId);
      for (const event of [...room.state, ...room.timeline]) rooms.apply(room.roomId, event);
      if (!known || (!wasEncrypted && rooms.isEncrypted(room.roomId))) changed = true;
      if ([...room.state, ...room.timeline].some((event) => event.type === 'm.room.name')) changed = true;
    }
    if (changed && !initial) this.roomsChanged();
  }

  /**
   * Reads every room's gap (a timeline cut short by `limited`: more happened
   * than the filter's limit, e.g. while Homing was away) from /messages,
   * forwards from the position before it, page by page to its end: nothing
   * that happened is lost, however long the gap. A page that fails is read
   * again after a backoff; the gap's position moves only past pages taken.
   *
   * Forwards from the sync position rather than back from the timeline's
   * `prev_batch`: the spec lets /messages start at a `next_batch`, Synapse pages
   * forwards from it by its stream position (storage/databases/main/stream.py,
   * `generate_pagination_bounds`), and reading forwards hands the events over in
   * order, one page in memory, with a position to note after each page.
   */
  private async readGaps(session: Session, generation: number): Promise<'done' | 'again'> {
    const state = this.syncState!;
    if (state.gaps.length === 0 || this.skeleton.clock.monotonic() < this.gapRetryAt) return 'done';
    for (const gap of [...state.gaps]) {
      const read = await this.readGap(session, gap, generation);
      if (read === 'again') return 'again';
      if (read === 'failed') {
        this.gapRetryAt = this.skeleton.clock.monotonic() + this.gapBackoff.next();
        return 'done';
      }
    }
    this.gapBackoff.reset();
    return 'done';
  }

  private async readGap(session: Session, gap: TimelineGap, generation: number): Promise<'done' | 'again' | 'failed'> {
    const state = this.syncState!;
    let from = gap.from;
    let taken = 0;
    for (;;) {
      if (!this.loop.alive(generation)) return 'again';
      const page = await this.gapPage(session, gap.roomId, from);
      if (!page.ok) {
        if (page.failure.kind === 'forbidden' || page.failure.kind === 'not-found') {
          // Left or removed: the room's history is no longer the bot's to read.
          this.skeleton.logger.warn('matrix: a room whose missed messages were being read can no longer be read', { error: page.failure.description });
          state.closeGap(gap.roomId);
          return 'done';
        }
        if (page.failure.kind === 'refused') {
          // The gap's token refused for good (a replaced server): asking again cannot help.
          state.closeGap(gap.roomId);
          const room = this.rooms?.name(gap.roomId);
          this.skeleton.status.emit({
            type: 'intake-gap',
            text: `The Matrix homeserver refused to give the messages Homing missed in ${room ? `the room ${room}` : 'a room'} (${page.failure.description}): some of them may not be answered.`,
          });
          return 'done';
        }
        this.skeleton.logger.warn('matrix: could not read a page of the messages missed in a room; reading it again shortly', { error: page.failure.description });
        return 'failed';
      }
      const { events, end } = page.value;
      const last = gap.until === null ? -1 : events.findIndex((event) => event.event_id === gap.until);
      const inGap = last >= 0 ? events.slice(0, last + 1) : events;
      if ((await this.takeTimeline(gap.roomId, inGap)) === 'again') return 'again';
      taken += inGap.length;
      // No `end`: nothing further yet. An `end` that does not move cannot lead further either (Synapse #12102 gives one at the end).
      if (last >= 0 || end === undefined || end === from) break;
      from = end;
      state.gapReadTo(gap.roomId, from);
    }
    state.closeGap(gap.roomId);
    this.skeleton.logger.info('matrix: read the messages missed in a room', { events: taken });
    return 'done';
  }

  /** One page of a room's timeline, forwards from `from` (an empty page with an `end` is not the end: the spec says to go on). */
  private async gapPage(session: Session, roomId: string, from: string): Promise<CallResult<{ events: SyncEvent[]; end: string | undefined }>> {
    const answer = await this.client.call<{ chunk?: unknown; end?: unknown }>('GET', `v3/rooms/${part(roomId)}/messages`, {
      token: session.token,
      query: { from, dir: 'f', limit: GAP_PAGE_LIMIT },
      timeoutMs: CALL_TIMEOUT_MS,
    });
    if (!answer.ok) return answer;
    const { chunk, end } = answer.value;
    if (!Array.isArray(chunk) || (end !== undefined && (typeof end !== 'string' || end === '' || end.length > 4096))) {
      return { ok: false, failure: { kind: 'unknown', description: 'a page of /messages that Homing cannot read' } };
    }
    return { ok: true, value: { events: readEvents(chunk), end } };
  }

  private async takeTimeline(roomId: string, timeline: readonly SyncEvent[]): Promise<'done' | 'again'> {
    const session = this.session;
    const state = this.syncState!;
    if (!session) return 'again';
    // Edits and redactions inside this batch apply to messages not taken yet.
    const edits = new Map<string, string>();
    const redacted = new Set<string>();
    for (const event of timeline) {
      if (event.type === 'm.room.redaction') {
        const target = event.redacts ?? (typeof event.content?.redacts === 'string' ? event.content.redacts : undefined);
        if (target) redacted.add(target);
      } else if (event.type === 'm.room.message' && event.sender !== undefined) {
        const meaning = readMessage(event);
        if (meaning.kind === 'edit') {
          const original = timeline.find((other) => other.event_id === meaning.target);
          // Only the author's own edit counts.
          if (original && original.sender === event.sender) edits.set(meaning.target, meaning.text);
        }
      }
    }
    for (const event of timeline) {
      const id = event.event_id;
      if (id === undefined || event.sender === undefined) continue;
      if (event.sender === session.userId) {
        if (event.type === 'm.room.message') state.rememberOwnEvent(id);
        continue; // our own echo (unsigned.transaction_id on this device's)
      }
      if (state.wasHandled(id)) continue;
      if (event.type === 'm.room.encrypted' || (event.type === 'm.room.encryption' && event.state_key !== undefined)) {
        await this.tellEncrypted(roomId);
        continue;
      }
      if (event.type !== 'm.room.message') continue;
      if (redacted.has(id)) {
        state.done(id);
        continue;
      }
      const meaning = readMessage(event);
      if (meaning.kind === 'edit') {
        if (!edits.has(meaning.target)) this.skeleton.logger.debug('matrix: an edit of a message already taken is ignored');
        continue;
      }
      if (meaning.kind === 'ignore') continue;
      const text = edits.get(id) ?? meaning.text;
      if ((await this.takeMessage(roomId, id, event.sender, { ...meaning, text })) === 'again') return 'again';
    }
    return 'done';
  }

  private async takeMessage(
    roomId: string,
    eventId: string,
    sender: string,
    message: {
      readonly text: string;
      readonly threadRoot: string | undefined;
      readonly inReplyTo: string | undefined;
      readonly mentions: readonly string[];
      readonly formatted: string | undefined;
      readonly media: readonly MediaOffer[];
    },
  ): Promise<'done' | 'again'> {
    const state = this.syncState!;
    const rooms = this.rooms!;
    const session = this.session!;
    if (rooms.isEncrypted(roomId)) {
      // A plain message in an encrypted room (a client without E2EE): still not a room Homing can work in.
      await this.tellEncrypted(roomId);
      state.done(eventId);
      return 'done';
    }
    const direct = rooms.isDirect(roomId);
    const senderName = rooms.memberName(roomId, sender);
    const decision = this.admit(roomId, direct, sender, message, session);
    if (decision === 'ignore') {
      state.done(eventId);
      return 'done';
    }
    if (decision === 'pair') {
      const request = this.options.access.requestPairing({ id: sender, chatId: roomId, name: senderName });
      if (request) this.pairingTeller.kick();
      state.done(eventId);
      return 'done';
    }
    const maybeSeen = state.interrupted === eventId;
    state.begin(eventId);
    const chatName = direct ? (senderName ?? rooms.name(roomId)) : rooms.name(roomId);
    const outcome = await this.skeleton.handOn.handOn({
      source: {
        platform: 'matrix',
        chatId: roomId,
        chatType: direct ? 'direct' : 'group',
        senderId: sender,
        ...(message.threadRoot !== undefined ? { threadId: message.threadRoot } : {}),
        ...(chatName !== undefined ? { chatName } : {}),
        ...(senderName !== undefined ? { senderName } : {}),
        messageId: eventId,
      },
      text: direct ? message.text : stripOwnMention(message.text, session.userId, rooms.memberName(roomId, session.userId)),
      messageRef: `mx:${roomId}:${eventId}`,
      replyTo: eventId,
      ...(maybeSeen ? { maybeSeen: true } : {}),
      ...(message.media.length > 0 ? { media: message.media } : {}),
    });
    if (outcome === 'not-now') {
      state.giveBack();
      return 'again';
    }
    state.done(eventId);
    return 'done';
  }

  /** Whether a message goes to the agent, gets a pairing code, or is ignored. */
  private admit(
    roomId: string,
    direct: boolean,
    sender: string,
    message: { readonly text: string; readonly threadRoot: string | undefined; readonly inReplyTo: string | undefined; readonly mentions: readonly string[]; readonly formatted: string | undefined },
    session: Session,
  ): AdmissionDecision {
    if (direct) return this.admission.direct(sender);
    // A room without settings of its own answers the allowlisted and approved, when addressed.
    const room = this.config.rooms[roomId] ?? { allowFrom: [], requireMention: true };
    return this.admission.inPlace(sender, room, () => this.addressed(message, session, roomId));
  }

  /** Mentioned (m.mentions, a pill, the name at the start), replying to the bot, or in a thread it answered in. */
  private addressed(
    message: { readonly text: string; readonly threadRoot: string | undefined; readonly inReplyTo: string | undefined; readonly mentions: readonly string[]; readonly formatted: string | undefined },
    session: Session,
    roomId: string,
  ): boolean {
    if (message.mentions.includes(session.userId)) return true;
    const state = this.syncState!;
    if (message.inReplyTo !== undefined && state.isOwnEvent(message.inReplyTo)) return true;
    if (message.threadRoot !== undefined && (state.isOwnThread(message.threadRoot) || state.isOwnEvent(message.threadRoot))) return true;
    if (message.text.includes(session.userId) || message.formatted?.includes(`matrix.to/#/${session.userId}`) || message.formatted?.includes(`matrix.to/#/${encodeURIComponent(session.userId)}`)) return true;
    const names = ownNames(session.userId, this.rooms?.memberName(roomId, session.userId));
    const start = message.text.trimStart().toLowerCase();
    return names.some((name) => start.startsWith(name) && /^[\s:,]/.test(start.slice(name.length) || ' '));
  }

  private async takeInvites(invites: readonly InviteUpdate[]): Promise<void> {
    const session = this.session;
    const state = this.syncState;
    if (!session || !state) return;
    for (const invite of invites) {
      const inviter = invite.inviter;
      const allowed =
        inviter !== undefined && (this.config.allowFrom.includes(inviter) || this.options.access.isApproved(inviter) || this.config.rooms[invite.roomId] !== undefined);
      // A stranger's direct chat is joined only to hand them a pairing code (or, open, to talk).
      const mayPair = inviter !== undefined && invite.isDirect && (this.config.dmPolicy === 'pairing' || this.config.dmPolicy === 'open');
      if (!allowed && !mayPair) {
        this.skeleton.logger.info('matrix: declined an invite from someone not allowed', { direct: invite.isDirect });
        await this.client.call('POST', `v3/rooms/${part(invite.roomId)}/leave`, { token: session.token, body: {}, timeoutMs: CALL_TIMEOUT_MS });
        continue;
      }
      const joined = await this.client.call('POST', `v3/join/${part(invite.roomId)}`, { token: session.token, body: {}, timeoutMs: CALL_TIMEOUT_MS });
      if (!joined.ok) {
        this.skeleton.logger.warn('matrix: could not join a room it was invited to', { error: joined.failure.description });
        continue;
      }
      if (invite.isDirect) state.markDirect(invite.roomId);
      this.skeleton.logger.info('matrix: joined a room', { direct: invite.isDirect, encrypted: invite.encrypted });
      if (invite.encrypted && allowed) await this.tellEncrypted(invite.roomId);
    }
  }

  /** Once per encrypted room: a short plain message, so the people there know why nobody answers. */
  private async tellEncrypted(roomId: string): Promise<void> {
    const state = this.syncState!;
    const wasKnown = this.rooms?.isEncrypted(roomId);
    if (!wasKnown) {
      this.rooms?.apply(roomId, { type: 'm.room.encryption', state_key: '', content: {} });
      this.roomsChanged();
    }
    if (state.wasToldEncrypted(roomId)) return;
    // A txnId of its own, stable per room: told once even if Homing dies right after sending.
    const txnId = `homing-e2ee-${createHash('sha256').update(roomId).digest('hex').slice(0, 24)}`;
    const sent = await this.put(roomId, txnId, { msgtype: 'm.notice', body: ENCRYPTED_NOTICE });
    if (sent.ok || sent.failure.kind === 'forbidden') state.markToldEncrypted(roomId);
    else this.skeleton.logger.warn('matrix: could not tell an encrypted room that Homing cannot read it', { error: sent.failure.description });
  }

  // ---- sending ---------------------------------------------------------

  async send(text: string, target: SendTarget): Promise<SendResult> {
    if (!/^![^\s]{1,254}$/.test(target.chatId)) return { ok: false, retryable: false, permanent: true, notDelivered: true, error: `not a Matrix room id: ${JSON.stringify(target.chatId.slice(0, 80))}` };
    const body = markdownToPlainText(text).replace(/[^\P{Cc}\n\t]/gu, '');
    let formatted: string | undefined = markdownToMatrixHtml(text);
    const relation = this.relationFor(target);
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      let content: Record<string, unknown> = {
        msgtype: 'm.text',
        body,
        ...(formatted !== undefined ? { format: 'org.matrix.custom.html', formatted_body: formatted } : {}),
        ...(relation ? { 'm.relates_to': relation } : {}),
        'm.mentions': {},
      };
      if (formatted !== undefined && Buffer.byteLength(JSON.stringify(content), 'utf8') > CONTENT_BUDGET_BYTES) {
        formatted = undefined;
        continue;
      }
      if (Buffer.byteLength(JSON.stringify(content), 'utf8') > CONTENT_BUDGET_BYTES) {
        content = {};
        return { ok: false, retryable: false, permanent: true, notDelivered: true, error: 'this part is too large for one Matrix event' };
      }
      const waited = await this.waitForGate();
      if (waited !== 'ok') return waited;
      const sent = await this.put(target.chatId, target.idempotencyKey, content);
      if (sent.ok) {
        this.syncState?.rememberOwnEvent(sent.value);
        if (target.threadId !== null) this.syncState?.rememberOwnThread(target.threadId);
        return { ok: true, platformMessageId: sent.value };
      }
      const failure = sent.failure;
      switch (failure.kind) {
        case 'rate-limited': {
          this.gateUntil = Math.max(this.gateUntil, this.skeleton.clock.now() + failure.retryAfterMs);
          if (failure.retryAfterMs <= (this.options.maxInlineWaitMs ?? 120_000)) continue;
          return { ok: false, retryable: true, permanent: false, notDelivered: true, retryAfterMs: failure.retryAfterMs, error: `the homeserver asked to wait (${failure.description})` };
        }
        case 'too-large':
          if (formatted !== undefined) {
            this.skeleton.logger.warn('matrix: the homeserver found the formatted message too large; sending this part as plain text');
            formatted = undefined;
            continue;
          }
          return { ok: false, retryable: false, permanent: true, notDelivered: true, error: `the homeserver refused the message as too large (${failure.description})` };
        case 'unauthorized':
          if (this.canLogInAgain()) {
            // The poll finds the same refusal and logs in again; the reply waits for that.
            this.session = undefined;
            this.setState('disconnected', `the homeserver ended the bot's session (${failure.description}); logging in again`);
            this.loop.abortPoll();
          } else this.authFailed(failure);
          return { ok: false, retryable: true, permanent: false, notDelivered: true, error: `the homeserver refused the access token (${failure.description})` };
        case 'forbidden':
          return { ok: false, retryable: false, permanent: true, notDelivered: true, error: `the bot may not write in this room: it left or was removed, or lacks the power level (${failure.description})` };
        case 'not-found':
          return { ok: false, retryable: false, permanent: true, notDelivered: true, error: `the homeserver does not know this room (${failure.description})` };
        case 'refused':
          return { ok: false, retryable: false, permanent: true, notDelivered: true, error: `the homeserver refused the message (${failure.description})` };
        case 'unknown':
          // It may have arrived: the resend carries the same txnId, so the room sees it once.
          return { ok: false, retryable: true, permanent: false, error: `no answer from the homeserver (${failure.description})` };
      }
    }
    return { ok: false, retryable: true, permanent: false, notDelivered: true, error: 'the homeserver kept refusing the message; trying again later' };
  }

  /** A thread's reply stays in the thread; in a room, a reply points at the message answered. */
  private relationFor(target: SendTarget): Record<string, unknown> | undefined {
    const replyTo = target.replyTo !== null && /^\$[^\s]{1,254}$/.test(target.replyTo) ? target.replyTo : undefined;
    if (target.threadId !== null && /^\$[^\s]{1,254}$/.test(target.threadId)) {
      return {
        rel_type: 'm.thread',
        event_id: target.threadId,
        // For clients without threads: shown as a reply to the message answered.
        is_falling_back: true,
        'm.in_reply_to': { event_id: replyTo ?? target.threadId },
      };
    }
    if (replyTo !== undefined && !(this.rooms?.isDirect(target.chatId) ?? false)) return { 'm.in_reply_to': { event_id: replyTo } };
    return undefined;
  }

  private async put(roomId: string, txnId: string, content: Record<string, unknown>): Promise<CallResult<string>> {
    const session = this.session;
    if (!session) return { ok: false, failure: { kind: 'refused', status: 0, errcode: '', description: 'not connected to the homeserver' } };
    const answer = await this.client.call<{ event_id?: unknown }>('PUT', `v3/rooms/${part(roomId)}/send/m.room.message/${part(txnId)}`, {
      token: session.token,
      body: content,
      timeoutMs: CALL_TIMEOUT_MS,
    });
    if (!answer.ok) return answer;
    const eventId = answer.value.event_id;
    if (typeof eventId !== 'string' || eventId === '') return { ok: false, failure: { kind: 'unknown', description: 'the send was answered without an event id' } };
    return { ok: true, value: eventId.slice(0, 512) };
  }

  /** Waits out a 429; a wait beyond the inline limit goes back to the ledger. */
  private async waitForGate(): Promise<'ok' | SendResult> {
    const generation = this.loop.generation;
    const wait = this.gateUntil - this.skeleton.clock.now();
    if (wait > (this.options.maxInlineWaitMs ?? 120_000)) {
      return { ok: false, retryable: true, permanent: false, notDelivered: true, retryAfterMs: wait, error: `the homeserver asked to wait ${Math.ceil(wait / 1000)} s` };
    }
    if (wait > 0) await this.pause(wait, generation, false);
    if (generation !== this.loop.generation || !this.session) return { ok: false, retryable: true, permanent: false, notDelivered: true, error: 'disconnected from the homeserver' };
    return 'ok';
  }

  /** A short plain message outside the ledger (a pairing code, an approval): best effort, never retried; true once it went out. */
  async sendNotice(chatId: string, text: string): Promise<boolean> {
    if (!/^![^\s]{1,254}$/.test(chatId)) return false;
    const sent = await this.put(chatId, `homing-notice-${randomBytes(12).toString('hex')}`, { msgtype: 'm.notice', body: text });
    if (!sent.ok) this.skeleton.logger.warn('matrix: a notice could not be sent', { error: sent.failure.description });
    return sent.ok;
  }

  /** "typing…" in the room until the returned function is called (each notice lasts 30 s, so it is renewed). */
  typing(target: TypingTarget): () => void {
    const session = this.session;
    if (!session || !/^![^\s]{1,254}$/.test(target.chatId) || !this.canSend()) return () => {};
    const path = `v3/rooms/${part(target.chatId)}/typing/${part(session.userId)}`;
    const tell = (typing: boolean) => {
      if (!this.session || this.gateUntil > this.skeleton.clock.now()) return;
      void this.client
        .call('PUT', path, { token: this.session.token, body: typing ? { typing: true, timeout: 30_000 } : { typing: false }, timeoutMs: CALL_TIMEOUT_MS })
        .then((answer) => {
          if (!answer.ok) this.skeleton.logger.debug('matrix: typing not shown', { error: answer.failure.description });
        });
    };
    return this.typingRepeats.start(() => tell(true), this.options.typingIntervalMs ?? 20_000, () => tell(false));
  }

  // ---- files -----------------------------------------------------------

  /**
   * Fetches a file a message offered (its `mxc://` URI), authenticated media
   * first (media-download.ts). The token is the session's; before the first
   * login after a start (a turn resumed right away) it is the stored access
   * token, or, with a password, the session it waits for a short while.
   */
  readonly openMedia = async (offer: Pick<MediaOffer, 'kind' | 'source' | 'mime' | 'name'>, options: { readonly signal: AbortSignal; readonly maxBytes: number }): Promise<MediaBody> => {
    const token = await this.mediaToken(options.signal);
    if (token === undefined) throw new MediaFetchError('not connected to the Matrix homeserver', false);
    return downloadMxc(offer.source, offer.kind, options, { homeserver: this.config.homeserver, token, fetch: this.options.fetch ?? fetch });
  };

  /** The token to download with: the session's, the stored one, or (with a password) the session once it comes, within MEDIA_LOGIN_WAIT_MS. */
  private async mediaToken(signal: AbortSignal): Promise<string | undefined> {
    const now = this.session?.token ?? ('accessToken' in this.options.credentials ? this.options.credentials.accessToken : undefined);
    if (now !== undefined || signal.aborted) return now;
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        stop();
        signal.removeEventListener('abort', finish);
        resolve(this.session?.token);
      };
      const timer = setTimeout(finish, MEDIA_LOGIN_WAIT_MS);
      const stop = this.skeleton.status.listen((event) => {
        if (event.type === 'state' && event.state === 'connected') finish();
      });
      signal.addEventListener('abort', finish, { once: true });
    });
  }

  // ---- plumbing --------------------------------------------------------

  private roomsChanged(): void {
    this.skeleton.status.emit({ type: 'rooms' });
  }

  /** Sleeps `ms`, or less when disconnected (or probed, unless it is a wait the homeserver asked for). */
  private pause(ms: number, generation: number, probeEnds = true): Promise<void> {
    return this.loop.pause(ms, generation, probeEnds);
  }

  private setState(state: AdapterState, error?: string): void {
    this.skeleton.status.set(state, error);
  }

}

/** Lower-case names people address the bot by: its localpart and its display name in the room. */
function ownNames(userId: string, displayName: string | undefined): string[] {
  const localpart = userId.slice(1).split(':')[0]!.toLowerCase();
  return [localpart, `@${localpart}`, ...(displayName ? [displayName.toLowerCase()] : [])];
}

/** "Homing: what time is it" → "what time is it". */
function stripOwnMention(text: string, userId: string, displayName: string | undefined): string {
  const trimmed = text.trimStart();
  const lower = trimmed.toLowerCase();
  for (const name of [userId.toLowerCase(), ...ownNames(userId, displayName)].sort((a, b) => b.length - a.length)) {
    if (lower.startsWith(name) && /^[\s:,]/.test(trimmed.slice(name.length))) {
      const rest = trimmed.slice(name.length).replace(/^[\s:,]+/, '');
      return rest === '' ? text : rest;
    }
  }
  return text;
}

/** The id of the newest event a sync showed in a room's timeline: a gap is read up to it. */
function newestEventId(timeline: readonly SyncEvent[]): string | null {
  for (let i = timeline.length - 1; i >= 0; i--) {
    const id = timeline[i]!.event_id;
    if (id !== undefined) return id;
  }
  return null;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
