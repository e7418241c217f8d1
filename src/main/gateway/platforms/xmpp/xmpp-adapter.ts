import { createHash } from 'node:crypto';
import type { Client, Element } from '@xmpp/client';
import type { AdapterEvent, AdapterState, InboundMessage, MessageLimits, PlatformAdapter, SendResult, SendTarget, TypingTarget } from '../adapter';
import type { XmppConfig } from './config-schema';
import type { MediaBody, MediaOffer } from '../../media/media';
import { openXmppMedia } from './open-media';
import { decideMessage, NS_CHAT_STATES, NS_MUC, NS_MUC_USER, NS_ORIGIN_ID, NS_STANZAS, parseAddress, roomStanzaId, type InboundDecision } from './inbound';
import { loadXmppClient, type XmppLibrary } from './load-xmpp-client';
import { describeError, describeStanzaError, stanzaErrorResult } from './send-errors';
import { defaultReconnectDelay } from '../backoff';
import { Admission } from '../skeleton/admission';
import { ReconnectTimer } from '../skeleton/reconnect-timer';
import { usualPairingTeller } from '../../access/pairing-replies';
import type { OwedCodes, PairingTeller } from '../../access/pairing-teller';
import { xmppIntake } from './intake';
import { NS_MAM } from './room-archive';
import { RoomPositions } from './room-positions';
import { RoomStay, type Place } from './room-stay';
import { AdapterSkeleton, type SkeletonOptions } from '../skeleton/skeleton';

/** Who may talk to the agent one to one, and the pairing of new senders (access/pairing-store.ts implements it). */
export interface XmppAccess extends OwedCodes {
  isApproved(senderId: string): boolean;
  requestPairing(sender: { readonly id: string; readonly chatId: string; readonly name: string | undefined }): { readonly code: string } | undefined;
}

export interface XmppAdapterOptions extends SkeletonOptions {
  readonly config: XmppConfig;
  readonly password: string;
  readonly access?: XmppAccess;
  /** How long a send waits for the server to confirm a chunk (default 15 s). */
  readonly ackTimeoutMs?: number;
  /** How long a login may take before the attempt is dropped (default 30 s). */
  readonly loginTimeoutMs?: number;
  /** Wait before joining a room again after it refused us or we were removed (default 30 s). */
  readonly rejoinDelayMs?: number;
  /** Told about each sender refused (not allowed, pairing off). */
  readonly onRefused?: (sender: string) => void;
  /** Where each room's archive position is kept (`<dataDir>/xmpp/`); without it (the Test connection) only in memory. */
  readonly dataDir?: string;
  /** Wait before reading a room's archive again after read `attempt` failed (default exponential 1 s → 5 min with jitter). */
  readonly archiveRetryDelayMs?: (attempt: number) => number;
}

const SM_NS = 'urn:xmpp:sm:3';
/** One incoming stanza may weigh at most this much; a bigger one (hostile, or broken) drops the connection. */
const MAX_INCOMING_STANZA_BYTES = 1024 * 1024;
/** Prosody's default c2s stanza size limit (256 KiB), less room for what the server adds (delay, stanza-id). */
const MAX_OUTGOING_STANZA_BYTES = 256 * 1024 - 4 * 1024;
/** Our own message ids remembered to recognise a room reflecting them. */
const OWN_IDS_KEPT = 5_000;
/** Nick variants tried when ours is taken in a room. */
const NICK_TRIES = 4;

/**
 * The XEP-0359 origin-id (and stanza id) of a chunk: derived from its
 * idempotency key, so a resend after a crash carries the same one and a
 * receiver can tell it is the same message. Servers do not deduplicate by it.
 */
export function originIdFor(idempotencyKey: string): string {
  return `homing-${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 32)}`;
}

interface PendingSend {
  readonly to: string;
  readonly settle: (result: SendResult) => void;
}

interface RoomState {
  /** The nick we asked for or hold. */
  nick: string;
  /** Which variant of the wanted nick (0: as configured, 1: with one `_`, …). */
  variant: number;
  joined: boolean;
  rejoinTimer: ReturnType<typeof setTimeout> | undefined;
  /** Our stay in the room since we joined it: its archive read and position (room-stay.ts). */
  stay: RoomStay | undefined;
}

/**
 * XMPP through @xmpp/client: one fixed resource, stream management (XEP-0198)
 * on, rooms (XEP-0045) joined without history, replies as plain-text messages.
 *
 * A chunk counts as sent when the server acknowledges it (stream management's
 * `<a h=…>`, or a ping answered after it where the server has no stream
 * management) and no error for its id came before. Each chunk carries an
 * origin-id derived from its idempotency key; the server does not deduplicate
 * (`idempotentSends: false`), so a chunk that may have arrived is resent with
 * the marker and the same origin-id.
 *
 * Durable intake: the stream management count the server hears from us never
 * covers a message the pipeline has not saved yet, so a message that was in
 * flight when the process died stays unacknowledged on the server (which then
 * stores it offline or bounces it to its sender, as it does for any
 * unacknowledged stanza).
 *
 * Rooms: prosody bounces a groupchat stanza to a session that died instead of
 * storing it, so on every join the adapter reads what the room's archive
 * (XEP-0313) kept after the last message it took there, page by page, and
 * tells the user once per absence when the room keeps no archive (room-stay.ts).
 */
export class XmppAdapter implements PlatformAdapter {
  readonly platform = 'xmpp';
  readonly limits: MessageLimits;
  readonly intake = xmppIntake;
  readonly idempotentSends = false;

  /** Logger, clock, state and events, message hand-on, reconnect backoff: what every adapter holds (skeleton/). */
  private readonly skeleton: AdapterSkeleton;
  private readonly config: XmppConfig;
  private readonly admission: Admission;
  private running = false;
  private xmpp: Client | undefined;
  /** @xmpp/client, once the first connect loaded it. */
  private library: XmppLibrary | undefined;
  /** Bumped by every connect and disconnect: a connect that finds it moved while the library loaded stops. */
  private connects = 0;
  /** The stream is open, authenticated and bound (fresh or resumed). */
  private online = false;
  /** Bumped for every fresh (not resumed) stream: intake held on an older one no longer counts. */
  private stream = 0;
  private lastError: string | undefined;
  private readonly reconnect = new ReconnectTimer();
  private loginTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly rooms = new Map<string, RoomState>();
  private readonly pending = new Map<string, PendingSend>();
  private readonly ownIds = new Set<string>();
  /** Stream management indexes of messages not saved yet (this stream). */
  private readonly held = new Set<number>();
  /** Stanzas received on this stream since stream management was enabled (XEP-0198's inbound `h`). */
  private received = 0;
  private readonly typingTargets = new Set<string>();
  /** Tells owed pairing codes, at most 20 per 10 minutes, and marks them told once sent. */
  private readonly pairingTeller: PairingTeller;
  private refSeq = 0;
  private readonly positions: RoomPositions;
  private readonly service: string;
  private readonly domain: string;
  private readonly local: string;

  constructor(private readonly options: XmppAdapterOptions) {
    this.config = options.config;
    this.skeleton = new AdapterSkeleton('xmpp', options);
    this.admission = new Admission(this.config, options.access);
    this.pairingTeller = usualPairingTeller({
      platform: 'xmpp',
      access: options.access,
      sendNotice: (chatId, text) => this.sendNotice(chatId, text),
      connected: () => this.online && this.xmpp !== undefined,
      logger: this.skeleton.logger,
      now: () => this.skeleton.clock.monotonic(),
    });
    this.limits = { maxLength: this.config.maxMessageBytes, unit: 'bytes' };
    const [local, domain] = this.config.jid.split('@') as [string, string];
    this.local = local;
    this.domain = domain;
    const host = this.config.host ?? domain;
    const port = this.config.port ?? (this.config.security === 'direct-tls' ? 5223 : 5222);
    this.service = `${this.config.security === 'direct-tls' ? 'xmpps' : 'xmpp'}://${host}:${port}`;
    for (const room of Object.keys(this.config.rooms)) {
      this.rooms.set(room, { nick: this.wantedNick(room), variant: 0, joined: false, rejoinTimer: undefined, stay: undefined });
    }
    this.positions =
      options.dataDir !== undefined && this.rooms.size > 0 ? RoomPositions.forAccount(options.dataDir, this.config.jid, this.skeleton.logger) : new RoomPositions(undefined, this.skeleton.logger);
  }

  state(): AdapterState {
    return this.skeleton.status.state;
  }

  /** The server address and account, for the Test connection's answer. */
  describeAccount(): string {
    return `${this.config.jid} on ${this.service.replace(/^xmpps?:\/\//, '')}`;
  }

  /** Whether stream management (XEP-0198) is on for the current stream. */
  streamManagementOn(): boolean {
    return this.xmpp?.streamManagement.enabled === true;
  }

  onEvent(listener: (event: AdapterEvent) => void): () => void {
    return this.skeleton.status.listen(listener);
  }

  canSend(target: Pick<SendTarget, 'chatId' | 'threadId'>): boolean {
    if (!this.online || !this.xmpp) return false;
    const room = this.rooms.get(target.chatId.toLowerCase());
    return room ? room.joined : true;
  }

  async connect(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.skeleton.backoff.reset();
    this.lastError = undefined;
    const generation = ++this.connects;
    try {
      this.library ??= await loadXmppClient();
    } catch (error) {
      if (generation !== this.connects) return;
      this.running = false;
      this.setState('disconnected', `cannot load @xmpp/client (a broken install?): ${describeError(error)}`);
      return;
    }
    // Disconnected (and perhaps connected again) while it loaded: that call goes on, not this one.
    if (generation !== this.connects) return;
    this.xmpp = this.newClient(this.library);
    void this.attempt();
  }

  async disconnect(): Promise<void> {
    this.running = false;
    this.connects++;
    this.reconnect.cancel();
    clearTimeout(this.loginTimer);
    for (const room of this.rooms.values()) {
      clearTimeout(room.rejoinTimer);
      room.rejoinTimer = undefined;
      room.joined = false;
      this.endStay(room);
    }
    const xmpp = this.xmpp;
    this.xmpp = undefined;
    this.online = false;
    if (xmpp) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const gaveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, 3_000)));
      await Promise.race([xmpp.stop().catch(() => undefined), gaveUp]);
      clearTimeout(timer);
      xmpp.socket?.destroy();
      xmpp.removeAllListeners();
      xmpp.on('error', () => {});
    }
    for (const pending of [...this.pending.values()]) pending.settle(unknownOutcome('disconnected before the server confirmed the message'));
    this.setState('disconnected');
  }

  /** After a sleep: a ping; no answer drops the connection, and the stream is resumed or opened again. */
  async probe(): Promise<void> {
    if (!this.running) return;
    const xmpp = this.xmpp;
    if (!xmpp || !this.online) {
      // Waiting out a backoff that began before the sleep: the network may be back now.
      this.reconnect.hurry();
      return;
    }
    try {
      await xmpp.iqCaller.request(this.xml('iq', { type: 'get', to: this.domain }, this.xml('ping', { xmlns: 'urn:xmpp:ping' })), 5_000);
    } catch {
      if (xmpp !== this.xmpp) return;
      this.skeleton.logger.warn('xmpp: no answer to a ping after resume; reconnecting');
      xmpp.socket?.destroy();
    }
  }

  // ---- connecting --------------------------------------------------------

  /** An XML element, built by the library: called only once a client exists, so it is loaded. */
  private xml(name: string, attrs?: Record<string, string | number | undefined> | null, ...children: (Element | string)[]): Element {
    return this.library!.xml(name, attrs, ...children);
  }

  private newClient(library: XmppLibrary): Client {
    const xmpp = library.client({
      service: this.service,
      domain: this.domain,
      username: this.local,
      password: this.options.password,
      resource: this.config.resource,
      timeout: 10_000,
    });
    // Our own reconnect, with backoff; the library's retries every second forever.
    xmpp.reconnect.stop();
    // Sends wait for the server's acknowledgement: ask for it soon after a burst.
    xmpp.streamManagement.requestAckDebounce = 30;

    // Bounded input: one stanza (or the bytes before it completes) at most MAX_INCOMING_STANZA_BYTES.
    let sinceElement = 0;
    const onData = xmpp._onData.bind(xmpp);
    xmpp._onData = (data: Buffer | string) => {
      sinceElement += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
      if (sinceElement > MAX_INCOMING_STANZA_BYTES) {
        this.lastError = 'the server sent a stanza bigger than 1 MiB';
        this.skeleton.logger.warn('xmpp: an incoming stanza is over 1 MiB; dropping the connection');
        sinceElement = 0;
        xmpp.socket?.destroy();
        return;
      }
      try {
        onData(data);
      } catch (error) {
        this.skeleton.logger.warn('xmpp: the server sent something unreadable; dropping the connection', { error: describeError(error) });
        xmpp.socket?.destroy();
      }
    };
    xmpp.on('element', () => (sinceElement = 0));
    xmpp.on('connect', () => (sinceElement = 0));

    // STARTTLS required: a server that does not offer it gets no login at all. Prepended, so the
    // connection is gone before the library's SASL step answers these features.
    xmpp.prependListener('element', (element: Element) => {
      if (element.name !== 'stream:features' || this.config.security !== 'starttls' || xmpp.isSecure()) return;
      if (element.getChild('starttls', 'urn:ietf:params:xml:ns:xmpp-tls')) return;
      xmpp.socket?.destroy();
      if (xmpp !== this.xmpp) return;
      this.running = false;
      clearTimeout(this.loginTimer);
      this.setState('auth-failed', `${this.service.replace('xmpp://', '')} does not offer STARTTLS, so the connection would not be encrypted; the password was not sent. Use a server with TLS, or set "security": "none" for a server on this machine`);
    });
    // Our own count of the stanzas received since <enabled/>: the library's misses the iq results
    // its iq caller consumes and counts stanzas that came before <enabled/>, and prosody drops a
    // client whose count is off. Prepended: counted before any handler (ours included) sees it.
    xmpp.prependListener('element', (element: Element) => {
      if (element.name === 'iq' || element.name === 'message' || element.name === 'presence') this.received++;
      else if (element.is('enabled', SM_NS)) this.received = 0;
    });
    // Durable intake: the count we acknowledge never passes a message not saved yet. A resume
    // tells the true count (we are alive: what is held will be saved), so nothing comes twice.
    const send = xmpp.send.bind(xmpp);
    xmpp.send = (element: Element) => {
      if (element.name === 'a' && element.attrs.xmlns === SM_NS) element.attrs.h = String(this.acknowledgeable(this.received));
      else if (element.name === 'resume' && element.attrs.xmlns === SM_NS) element.attrs.h = String(this.received);
      return send(element);
    };

    xmpp.on('error', (error: unknown) => this.onClientError(xmpp, error));
    // The library says "online" before stream management is enabled; our first stanzas wait for
    // <enabled/> (or <failed/>), so both sides count the same stanzas from the same point.
    let offersSm = false;
    let enabling: (() => void) | undefined;
    xmpp.on('element', (element: Element) => {
      if (element.name === 'stream:features') offersSm = element.getChild('sm', SM_NS) !== undefined;
    });
    xmpp.on('nonza', (element: Element) => {
      if ((element.is('enabled', SM_NS) || element.is('failed', SM_NS)) && enabling) {
        const go = enabling;
        enabling = undefined;
        // After the library's own handler (a microtask) has reset its counters.
        setImmediate(go);
      }
    });
    xmpp.on('online', () => {
      if (!offersSm) return this.onStreamReady(xmpp, false);
      const timer = setTimeout(() => enabling?.(), 5_000);
      enabling = () => {
        enabling = undefined;
        clearTimeout(timer);
        this.onStreamReady(xmpp, false);
      };
    });
    xmpp.streamManagement.on('resumed', () => this.onStreamReady(xmpp, true));
    xmpp.on('disconnect', () => this.onDisconnected(xmpp));
    xmpp.middleware.use((context, next) => {
      try {
        this.onStanza(xmpp, context.stanza);
      } catch (error) {
        this.skeleton.logger.error('xmpp: handling an incoming stanza failed', { error: describeError(error) });
      }
      return next();
    });
    return xmpp;
  }

  private async attempt(): Promise<void> {
    const xmpp = this.xmpp;
    if (!this.running || !xmpp) return;
    if (xmpp.status !== 'offline' && xmpp.status !== 'disconnect') return;
    this.setState('connecting');
    clearTimeout(this.loginTimer);
    this.loginTimer = setTimeout(() => {
      if (xmpp === this.xmpp && !this.online) {
        this.lastError = `no login within ${Math.round((this.options.loginTimeoutMs ?? 30_000) / 1000)} s`;
        this.skeleton.logger.warn('xmpp: the login timed out');
        xmpp.socket?.destroy();
      }
    }, this.options.loginTimeoutMs ?? 30_000);
    try {
      await xmpp.connect(this.service);
      await xmpp.open({ domain: this.domain });
    } catch (error) {
      if (xmpp !== this.xmpp) return;
      this.lastError ??= describeError(error);
      // A socket that connected but whose stream did not open: drop it, the disconnect schedules the next try.
      if (xmpp.status !== 'disconnect') xmpp.socket?.destroy();
    }
  }

  private onClientError(xmpp: Client, error: unknown): void {
    if (xmpp !== this.xmpp) return;
    const condition = (error as { condition?: unknown }).condition;
    if (condition === 'not-authorized' || condition === 'account-disabled' || condition === 'credentials-expired') {
      // The same password will be refused again: wait for new settings (connect()).
      this.running = false;
      clearTimeout(this.loginTimer);
      this.reconnect.cancel();
      this.setState('auth-failed', `the server refused the login for ${this.config.jid} (${condition}): check the JID and the password`);
      void xmpp.disconnect().catch(() => undefined);
      return;
    }
    if (condition === 'conflict') {
      this.lastError = `another client logged in as ${this.config.jid}/${this.config.resource} and took over the session (conflict): is another Homing using this account?`;
    } else {
      this.lastError = describeError(error);
    }
    // Said once, by the state change that follows (the disconnect).
    this.skeleton.logger.debug('xmpp: connection error', { error: this.lastError });
  }

  private onStreamReady(xmpp: Client, resumed: boolean): void {
    if (xmpp !== this.xmpp || !this.running) return;
    clearTimeout(this.loginTimer);
    if (this.config.security === 'starttls' && !xmpp.isSecure()) {
      this.running = false;
      this.online = false;
      this.setState('auth-failed', `the connection to ${this.service.replace('xmpp://', '')} is not encrypted; nothing was sent. Use a server with TLS, or set "security": "none" for a server on this machine`);
      void xmpp.disconnect().catch(() => undefined);
      return;
    }
    this.online = true;
    this.skeleton.backoff.reset();
    this.lastError = undefined;
    if (!resumed) {
      this.stream++;
      this.held.clear();
      for (const room of this.rooms.values()) {
        room.joined = false;
        this.endStay(room);
      }
      // Available, so the server hands us messages sent while we were away (offline storage).
      void xmpp.send(this.xml('presence', {})).catch(() => undefined);
      for (const room of this.rooms.keys()) this.join(room);
    }
    this.skeleton.logger.info(resumed ? 'xmpp: stream resumed' : 'xmpp: connected', { jid: this.config.jid });
    this.setState(this.roomTrouble() ?? 'connected');
    if (resumed) this.skeleton.status.emit({ type: 'reachable' });
  }

  private onDisconnected(xmpp: Client): void {
    if (xmpp !== this.xmpp) return;
    this.online = false;
    clearTimeout(this.loginTimer);
    if (!this.running || this.reconnect.waiting) return;
    const delay = this.skeleton.backoff.next();
    this.setState('disconnected', this.lastError ?? 'lost the connection to the server', this.skeleton.clock.now() + delay);
    this.lastError = undefined;
    this.reconnect.schedule(delay, () => void this.attempt());
  }

  // ---- rooms -----------------------------------------------------------

  private wantedNick(room: string): string {
    return this.config.rooms[room]?.nick ?? this.config.nick ?? this.local;
  }

  private join(room: string): void {
    const state = this.rooms.get(room);
    const xmpp = this.xmpp;
    if (!state || !xmpp || !this.online) return;
    clearTimeout(state.rejoinTimer);
    state.rejoinTimer = undefined;
    state.nick = this.wantedNick(room) + '_'.repeat(state.variant);
    // Our first join: where to read from is on disk before the room sees us (room-positions.ts `begun`).
    if (!this.positions.get(room)) this.positions.begin(room, this.skeleton.clock.now());
    // No history: old talk is not addressed to the agent now, and would be answered twice after a restart.
    void xmpp
      .send(this.xml('presence', { to: `${room}/${state.nick}` }, this.xml('x', { xmlns: NS_MUC }, this.xml('history', { maxstanzas: '0' }))))
      .catch(() => undefined);
  }

  private scheduleRejoin(room: string, state: RoomState): void {
    clearTimeout(state.rejoinTimer);
    state.rejoinTimer = setTimeout(() => {
      state.rejoinTimer = undefined;
      this.join(room);
    }, this.options.rejoinDelayMs ?? 30_000);
  }

  private onPresence(stanza: Element): void {
    const from = parseAddress(stanza.attrs.from);
    if (!from) return;
    const state = this.rooms.get(from.bare);
    if (!state) return;
    const type = stanza.attrs.type;
    if (type === 'error') {
      if (from.resource !== state.nick) return;
      const error = stanza.getChild('error');
      const condition = error?.children.find((child): child is Element => typeof child !== 'string' && child.attrs.xmlns === NS_STANZAS && child.name !== 'text')?.name;
      if (condition === 'conflict' && state.variant + 1 < NICK_TRIES) {
        state.variant++;
        this.skeleton.logger.warn('xmpp: our nick is taken in a room; trying another', { room: from.bare, nick: state.nick });
        this.join(from.bare);
        return;
      }
      state.joined = false;
      const words = describeStanzaError({ condition, type: error?.attrs.type, text: error?.getChildText('text', NS_STANZAS) ?? undefined });
      this.setState('degraded', `cannot join ${from.bare}: ${words}`);
      this.scheduleRejoin(from.bare, state);
      return;
    }
    const self = stanza.getChild('x', NS_MUC_USER)?.getChildren('status').some((status) => status.attrs.code === '110') ?? false;
    if (!self && from.resource !== state.nick) return;
    if (type === 'unavailable') {
      if (!state.joined) return;
      state.joined = false;
      this.endStay(state);
      this.skeleton.logger.warn('xmpp: we are out of a room (kicked, or the room closed); joining again later', { room: from.bare });
      this.setState('degraded', `left ${from.bare} (removed from the room, or it closed); joining it again shortly`);
      this.scheduleRejoin(from.bare, state);
      return;
    }
    if (!self || state.joined) return;
    state.joined = true;
    state.nick = from.resource;
    state.variant = 0;
    this.skeleton.logger.info('xmpp: joined a room', { room: from.bare });
    this.beginStay(from.bare, state, this.xmpp!);
    if (this.skeleton.status.state === 'degraded' && !this.roomTrouble()) this.setState('connected');
    // Replies owed to this room can go now.
    this.skeleton.status.emit({ type: 'reachable' });
  }

  /** 'degraded' while a room we should be in refused us (and we wait to try again). */
  private roomTrouble(): 'degraded' | undefined {
    return [...this.rooms.values()].some((room) => !room.joined && room.rejoinTimer !== undefined) ? 'degraded' : undefined;
  }

  // ---- room archives (XEP-0313) -----------------------------------------

  /** We are in the room (again): read what its archive kept since our position, then follow it live. */
  private beginStay(room: string, state: RoomState, xmpp: Client): void {
    this.endStay(state);
    const stay = new RoomStay(room, {
      positions: this.positions,
      logger: this.skeleton.logger,
      clock: this.skeleton.clock,
      xml: this.library!.xml,
      request: (iq, timeoutMs) => xmpp.iqCaller.request(iq, timeoutMs),
      take: (message, place) => this.takeArchived(room, message, place),
      gap: (text) => this.skeleton.status.emit({ type: 'intake-gap', text }),
      retryDelay: this.options.archiveRetryDelayMs ?? defaultReconnectDelay,
    });
    state.stay = stay;
    stay.begin();
  }

  /** Out of the room (left, removed, the stream gone): that stay no longer moves the position. */
  private endStay(state: RoomState): void {
    state.stay?.end();
    state.stay = undefined;
  }

  /** A message the room's archive kept: only a groupchat message from this room counts (a hostile archive could hold anything). */
  private takeArchived(room: string, message: Element, place: Place): void {
    const decision = this.decide(message);
    if (decision.kind !== 'room' || decision.room !== room) return place();
    this.onDecision(decision, undefined, place, true);
  }

  // ---- receiving -------------------------------------------------------

  private onStanza(xmpp: Client, stanza: Element): void {
    if (xmpp !== this.xmpp) return;
    if (stanza.name === 'presence') return this.onPresence(stanza);
    if (stanza.name !== 'message') return;
    if (stanza.getChild('result', NS_MAM)) return this.rooms.get(parseAddress(stanza.attrs.from)?.bare ?? '')?.stay?.onArchived(stanza);
    // Counted on arrival (newClient): this is the stanza's number on this stream.
    const index = this.received;
    const place = this.livePlace(stanza);
    // The room's archive handed it already while we read it (it came live during that read).
    if (place === 'seen') return;
    this.onDecision(this.decide(stanza), index, place);
  }

  private decide(stanza: Element): InboundDecision {
    return decideMessage(stanza, {
      self: this.config.jid,
      roomNick: (room) => this.rooms.get(room)?.nick,
      everyMessage: (room) => this.config.rooms[room]?.requireMention === false,
      isOwnId: (id) => this.ownIds.has(id),
    });
  }

  /**
   * A live groupchat message's place in its room's archive order (by the room's
   * stanza-id): called once it is saved or needs nothing. Undefined for a message
   * the room did not archive (or not a room's); 'seen' when it was taken already.
   */
  private livePlace(stanza: Element): Place | 'seen' | undefined {
    if (stanza.attrs.type !== 'groupchat') return undefined;
    const room = parseAddress(stanza.attrs.from)?.bare;
    const stay = room === undefined ? undefined : this.rooms.get(room)?.stay;
    const id = room === undefined ? undefined : roomStanzaId(stanza, room);
    return stay && id !== undefined ? stay.live(id) : undefined;
  }

  /**
   * What an incoming message means, and what to do with it. `index`: its stream
   * management number (undefined for one read from an archive); `place`: its
   * room's archive position may pass it (once saved, or at once when it needs nothing).
   */
  private onDecision(decision: InboundDecision, index: number | undefined, place: Place | undefined, fromArchive = false): void {
    if (decision.kind !== 'room') place?.();
    switch (decision.kind) {
      case 'ignore':
        return;
      case 'error': {
        const pending = this.pending.get(decision.id);
        const room = this.rooms.get(decision.from);
        if (room && decision.condition === 'not-acceptable' && room.joined) {
          room.joined = false;
          this.join(decision.from);
        }
        if (pending && pending.to === decision.from) pending.settle(stanzaErrorResult(decision, decision.from));
        else this.skeleton.logger.debug('xmpp: an error for a message already confirmed', { condition: decision.condition });
        return;
      }
      case 'room':
        this.take(
          index,
          {
          source: {
            platform: 'xmpp',
            chatId: decision.room,
            chatType: 'group',
            senderId: `${decision.room}/${decision.nick}`,
            senderName: decision.nick,
            chatName: decision.room,
          },
          text: decision.text,
          ...(decision.media ? { media: decision.media } : {}),
          messageRef: this.messageRef(decision.room, decision.nick, decision.id),
          // Handed again by a resume, or read from the archive: a previous run may have saved it.
          ...(decision.delayed || fromArchive ? { maybeSeen: true } : {}),
          },
          place,
        );
        return;
      case 'direct': {
        const admitted = this.admission.direct(decision.from);
        if (admitted === 'ignore') {
          this.skeleton.logger.info('xmpp: refused a sender who is not allowed', {});
          this.options.onRefused?.(decision.from);
          return;
        }
        if (admitted === 'pair') {
          const request = this.options.access?.requestPairing({ id: decision.from, chatId: decision.from, name: decision.from.split('@')[0] });
          if (request) this.pairingTeller.kick();
          this.options.onRefused?.(decision.from);
          return;
        }
        this.take(index, {
          source: { platform: 'xmpp', chatId: decision.from, chatType: 'direct', senderId: decision.from, senderName: decision.from.split('@')[0] ?? decision.from },
          text: decision.text,
          ...(decision.media ? { media: decision.media } : {}),
          messageRef: this.messageRef(decision.from, decision.resource, decision.id),
          ...(decision.delayed ? { maybeSeen: true } : {}),
        });
        return;
      }
    }
  }

  /** A stable reference when the sender gave an id (the same message handed again keeps it); else one of our own. */
  private messageRef(chatId: string, sender: string, id: string | undefined): string {
    if (id && id.length <= 200) return `xmpp:${chatId}:${sender.slice(0, 100)}:${id}`;
    return `xmpp:${chatId}:local-${this.skeleton.clock.now().toString(36)}-${++this.refSeq}`;
  }

  /**
   * Hands a message on and holds its stream management acknowledgement (`index`)
   * and its room's archive position (`place`) until the pipeline says it is saved.
   */
  private take(index: number | undefined, message: InboundMessage, place?: Place): void {
    const stream = this.stream;
    if (index !== undefined) this.held.add(index);
    this.skeleton.handOn.give(message, (outcome) => {
      // Not saved (or not in time): keep it held; the server keeps it as unacknowledged and hands it on at the
      // session's end, and a room's archive hands it again at the next join.
      if (outcome === 'not-now' || outcome === 'timeout') {
        this.skeleton.logger.warn('xmpp: a message could not be saved now; it stays unacknowledged on the server', {});
        return;
      }
      place?.();
      if (index === undefined || stream !== this.stream) return;
      this.held.delete(index);
      const xmpp = this.xmpp;
      if (xmpp?.streamManagement.enabled && this.online) {
        void xmpp.send(this.xml('a', { xmlns: SM_NS, h: this.received })).catch(() => undefined);
      }
    });
  }

  /** The `h` we may tell the server: every stanza before the first message not saved yet. */
  private acknowledgeable(h: number): number {
    if (this.held.size === 0) return h;
    return Math.min(h, Math.min(...this.held) - 1);
  }

  // ---- files -----------------------------------------------------------

  /**
   * Fetches a file a message offered (XEP-0066: a URL, usually on the server's
   * XEP-0363 upload service): a plain HTTP GET, with no XMPP connection needed
   * and no credentials sent (open-media.ts).
   */
  readonly openMedia = (offer: Pick<MediaOffer, 'kind' | 'source' | 'mime' | 'name'>, options: { readonly signal: AbortSignal; readonly maxBytes: number }): Promise<MediaBody> =>
    openXmppMedia(offer, options, { allowHttp: this.config.allowHttpFiles });

  // ---- sending ---------------------------------------------------------

  async send(text: string, target: SendTarget): Promise<SendResult> {
    const to = parseAddress(target.chatId);
    if (!to || to.resource || !to.bare.includes('@')) {
      return { ok: false, retryable: false, permanent: true, notDelivered: true, error: `not an XMPP address: ${JSON.stringify(target.chatId.slice(0, 100))}` };
    }
    const xmpp = this.xmpp;
    if (!xmpp || !this.online) return { ok: false, retryable: true, permanent: false, notDelivered: true, error: 'not connected to the XMPP server' };
    const room = this.rooms.get(to.bare);
    if (room && !room.joined) return { ok: false, retryable: true, permanent: false, notDelivered: true, error: `not in ${to.bare} yet; sending once joined` };
    const id = originIdFor(target.idempotencyKey);
    const stanza = this.xml(
      'message',
      { to: to.bare, type: room ? 'groupchat' : 'chat', id },
      this.xml('body', {}, text),
      this.xml('origin-id', { xmlns: NS_ORIGIN_ID, id }),
      ...(room ? [] : [this.xml('active', { xmlns: NS_CHAT_STATES })]),
    );
    const size = Buffer.byteLength(stanza.toString(), 'utf8');
    if (size > MAX_OUTGOING_STANZA_BYTES) {
      return { ok: false, retryable: false, permanent: true, notDelivered: true, error: `the message is ${size} bytes as XML, over the server's stanza limit (256 KiB)` };
    }
    this.remember(id);
    this.typingTargets.delete(to.bare);
    return this.sendConfirmed(xmpp, stanza, id, to.bare);
  }

  /** Sends a stanza and resolves once the server confirmed it, refused it, or the confirmation did not come. */
  private sendConfirmed(xmpp: Client, stanza: Element, id: string, to: string): Promise<SendResult> {
    return new Promise<SendResult>((resolve) => {
      const sm = xmpp.streamManagement;
      const withAcks = sm.enabled;
      let done = false;
      const settle = (result: SendResult) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (this.pending.get(id) === entry) this.pending.delete(id);
        sm.off('ack', onAck);
        sm.off('fail', onFail);
        resolve(result);
      };
      const entry: PendingSend = { to, settle };
      const onAck = (acked: Element) => {
        if (acked === stanza) settle({ ok: true, platformMessageId: id });
      };
      const onFail = (failed: Element) => {
        if (failed === stanza) settle(unknownOutcome('the connection dropped and the server never confirmed the message'));
      };
      const timeoutMs = this.options.ackTimeoutMs ?? 15_000;
      const timer = setTimeout(() => settle(unknownOutcome(`the server did not confirm the message within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
      this.pending.get(id)?.settle(unknownOutcome('sent again before the server confirmed it'));
      this.pending.set(id, entry);
      if (withAcks) {
        sm.on('ack', onAck);
        sm.on('fail', onFail);
      }
      xmpp.send(stanza).then(
        () => {
          if (withAcks) return;
          // No stream management: a ping answered after the message means the server handled it.
          xmpp.iqCaller.request(this.xml('iq', { type: 'get', to: this.domain }, this.xml('ping', { xmlns: 'urn:xmpp:ping' })), timeoutMs).then(
            () => settle({ ok: true, platformMessageId: id }),
            () => settle(unknownOutcome('the server did not answer the ping after the message')),
          );
        },
        (error: unknown) => settle(unknownOutcome(`writing the message failed: ${describeError(error)}`)),
      );
    });
  }

  private remember(id: string): void {
    this.ownIds.delete(id);
    this.ownIds.add(id);
    if (this.ownIds.size > OWN_IDS_KEPT) this.ownIds.delete(this.ownIds.values().next().value as string);
  }

  /** A short message outside the ledger (a pairing code, an approval): best effort, never retried; true once it went out. */
  async sendNotice(chatId: string, text: string): Promise<boolean> {
    const to = parseAddress(chatId);
    const xmpp = this.xmpp;
    if (!to || to.resource || !xmpp || !this.online || this.rooms.has(to.bare)) return false;
    try {
      await xmpp.send(this.xml('message', { to: to.bare, type: 'chat' }, this.xml('body', {}, text)));
      return true;
    } catch (error) {
      this.skeleton.logger.warn('xmpp: a notice could not be sent', { error: describeError(error) });
      return false;
    }
  }

  /** XEP-0085 chat states: `composing` while the agent works, `active` after (unless the reply already said it). */
  typing(target: TypingTarget): () => void {
    const to = parseAddress(target.chatId);
    if (!to || to.resource || !this.canSend(target)) return () => {};
    const type = this.rooms.has(to.bare) ? 'groupchat' : 'chat';
    const state = (name: 'composing' | 'active') => {
      const xmpp = this.xmpp;
      if (!xmpp || !this.online) return;
      // no-store: a chat state is worth nothing later, so offline storage should not keep it.
      void xmpp
        .send(this.xml('message', { to: to.bare, type }, this.xml(name, { xmlns: NS_CHAT_STATES }), this.xml('no-store', { xmlns: 'urn:xmpp:hints' })))
        .catch(() => undefined);
    };
    state('composing');
    this.typingTargets.add(to.bare);
    return () => {
      // A reply sent meanwhile carried <active/> itself.
      if (!this.typingTargets.delete(to.bare)) return;
      state('active');
    };
  }

  // ---- plumbing --------------------------------------------------------

  private setState(state: AdapterState, error?: string, nextAttemptAt?: number): void {
    this.skeleton.status.set(state, error, nextAttemptAt);
  }

}

/** A send whose message may have reached the server: its resend carries the marker. */
function unknownOutcome(error: string): SendResult {
  return { ok: false, retryable: true, permanent: false, error };
}
