import type { Client, IrcMessageEvent, IrcParsedLine } from 'irc-framework';
import type { Logger } from '../../logger';
import { AccountBook } from './accounts';
import type { AccountFact } from './allowlist';
import { hasControlCharacter, type IrcConfig } from './config-schema';
import { alternativeNick, nickLengthFrom, RFC_NICKLEN } from './nick';
import type { IrcLibrary } from './load-irc-framework';
import { guardServerLines } from './server-lines';

/** Why a connection ended, as far as the adapter's next step is concerned. */
export type CloseReason =
  | { readonly kind: 'dropped'; readonly error: string }
  /** The server refused our credentials (464, "Bad password", a ban): retrying will not help. */
  | { readonly kind: 'auth-failed'; readonly error: string }
  | { readonly kind: 'requested' };

export interface ConnectionEvents {
  registered(nick: string): void;
  joinFailed(channel: string, reason: string): void;
  /** We are in `channel` now: sends to it can go out. */
  joined?(channel: string): void;
  message(kind: 'privmsg' | 'action', event: IrcMessageEvent): void;
  /** A CTCP request other than ACTION (`VERSION`, …); irc-framework answers none itself. */
  ctcpRequest(nick: string, type: string): void;
  closed(reason: CloseReason): void;
}

/** Numerics that mean "this target will not take messages": 401 no such nick/channel, 403 no such channel, 404 cannot send. */
const TARGET_ERRORS = new Set(['401', '403', '404']);
/** Numerics that refuse a JOIN. */
const JOIN_ERRORS = new Set(['403', '405', '471', '473', '474', '475', '477']);

/**
 * The first setting that would break the IRC wire (a control character: CR/LF
 * would end our line and start a command of its own), or undefined. The config
 * schema refuses these already; this covers what does not pass through it (a
 * password from the secret store or the environment).
 */
export function unsafeSetting(config: IrcConfig): string | undefined {
  const fields: [string, string | undefined][] = [
    ['host', config.host],
    ['nick', config.nick],
    ['username', config.username],
    ['realname', config.realname],
    ['password', config.password],
    ...config.channels.map((channel, index): [string, string] => [`channels.${index}`, channel]),
  ];
  return fields.find(([, value]) => value !== undefined && hasControlCharacter(value))?.[0];
}

/**
 * One connection attempt to the server with one irc-framework client: registration
 * (falling back to other nicks), PING round trips, per-target error watching. The
 * adapter makes a new one per attempt, so no state leaks from a dead connection.
 */
export class IrcConnection {
  private readonly client: Client;
  private nickAttempt = 0;
  /** The longest nick the server takes: its ISUPPORT NICKLEN, or RFC 1459's 9 once it refused a longer one as erroneous. */
  private nickLength = Infinity;
  private registeredNick: string | undefined;
  private authError: string | undefined;
  private closedReason: CloseReason | undefined;
  private quitRequested = false;
  private pingSeq = 0;
  private readonly pings = new Map<string, (result: 'pong' | 'closed') => void>();
  private readonly targetWatchers = new Set<(target: string, error: string) => void>();
  /** Channels we are in now (case-folded): JOINs and PARTs/KICKs of our own nick. */
  private readonly joined = new Set<string>();
  private readonly book: AccountBook;
  private readonly whoisPending = new Map<string, { account: string | null; done: Promise<AccountFact>; resolve(fact: AccountFact): void }>();
  private resolveClosed: (reason: CloseReason) => void = () => {};
  /** Settles once, when the socket has closed. */
  readonly whenClosed = new Promise<CloseReason>((resolve) => (this.resolveClosed = resolve));

  constructor(
    irc: IrcLibrary,
    private readonly config: IrcConfig,
    private readonly events: ConnectionEvents,
    private readonly logger: Logger,
  ) {
    this.book = new AccountBook((text) => this.caseLower(text));
    this.client = new irc.Client({
      host: config.host,
      port: config.port,
      tls: config.tls,
      rejectUnauthorized: true,
      nick: config.nick,
      username: config.username ?? config.nick.slice(0, 10),
      gecos: config.realname ?? 'Homing',
      ...(config.password ? { password: config.password } : {}),
      // irc-framework would answer every CTCP VERSION at once, outside our pacer;
      // the adapter answers through the pacer and within a per-sender budget.
      version: null,
      // The adapter reconnects itself, with its own backoff and state events.
      auto_reconnect: false,
      ping_interval: 30,
      ping_timeout: 120,
      // A server that never ends its line cannot grow our memory (bounded-transport.ts).
      transport: irc.Transport,
    });
    guardServerLines(this.client, irc.ircLineParser, {
      dropped: (line, why) => this.logger.warn('irc: dropped a malformed line from the server', { why, line: line.slice(0, 200) }),
      threw: (line, error) => this.logger.error('irc: a line from the server could not be handled', { error, line: line.slice(0, 200) }),
    });
    this.client.on('raw', (event: { line: string; from_server: boolean }) => {
      if (!event.from_server) return;
      const parsed = irc.ircLineParser(event.line);
      if (parsed) this.onLine(parsed);
    });
    this.client.on('registered', (event: { nick: string }) => {
      this.registeredNick = event.nick;
      this.events.registered(event.nick);
      for (const channel of config.channels) this.client.join(channel);
    });
    this.client.on('privmsg', (event: IrcMessageEvent) => this.events.message('privmsg', event));
    this.client.on('action', (event: IrcMessageEvent) => this.events.message('action', event));
    this.client.on('ctcp request', (event: { nick?: string; type?: string | null }) => {
      if (event.nick && event.type) this.events.ctcpRequest(event.nick, event.type);
    });
    this.client.on('pong', (event: { message?: string }) => {
      const resolve = event.message ? this.pings.get(event.message) : undefined;
      if (resolve && event.message) {
        this.pings.delete(event.message);
        resolve('pong');
      }
    });
    this.client.on('socket close', (error?: Error | false) => this.onClose(error ? error.message : 'connection closed'));
  }

  start(): void {
    this.client.connect();
  }

  /** Our nick once registered. */
  get nick(): string | undefined {
    return this.registeredNick === undefined ? undefined : this.client.user.nick;
  }

  get open(): boolean {
    return this.closedReason === undefined;
  }

  caseLower(text: string): string {
    return this.client.caseLower(text);
  }

  /** Whether we are in `channel` now. */
  inChannel(channel: string): boolean {
    return this.joined.has(this.caseLower(channel));
  }

  /**
   * What the server has said about `nick`'s account without asking: the IRCv3
   * account tag on the message itself (`tagAccount`), or the account book while
   * the server keeps it current. Undefined when only a WHOIS can tell.
   */
  knownAccount(nick: string, tagAccount: string | undefined): AccountFact {
    if (this.capEnabled('account-tag')) return tagAccount === undefined || tagAccount === '*' ? null : tagAccount;
    if (this.capEnabled('extended-join') && this.capEnabled('account-notify')) return this.book.get(nick);
    return undefined;
  }

  /**
   * Asks the server which account `nick` is logged in to (WHOIS, answered by 330
   * where the server has services). `null` when the answer ends without one or
   * the nick is gone, `undefined` when no answer came in time. One question per
   * nick at a time; the caller has taken a pacer token.
   */
  whoisAccount(nick: string, timeoutMs: number): Promise<AccountFact> {
    if (!this.open) return Promise.resolve(undefined);
    const key = this.caseLower(nick);
    const pending = this.whoisPending.get(key);
    if (pending) return pending.done;
    let resolve: (fact: AccountFact) => void = () => {};
    const done = new Promise<AccountFact>((settle) => (resolve = settle));
    const entry = { account: null as string | null, done, resolve };
    this.whoisPending.set(key, entry);
    const timer = setTimeout(() => this.settleWhois(key, undefined), timeoutMs);
    void done.then(() => clearTimeout(timer));
    this.client.raw('WHOIS', nick);
    return done;
  }

  private settleWhois(key: string, fact: AccountFact): void {
    const entry = this.whoisPending.get(key);
    if (!entry) return;
    this.whoisPending.delete(key);
    entry.resolve(fact);
  }

  private capEnabled(name: string): boolean {
    return this.client.network.cap.isEnabled(name);
  }

  isChannel(target: string): boolean {
    const types = this.client.network.supports('CHANTYPES');
    return (typeof types === 'string' && types ? types : '#&+!').includes(target.charAt(0));
  }

  /** Writes one raw line; the caller has checked that the connection is open. */
  write(line: string): void {
    this.client.raw(line);
  }

  /**
   * A PING round trip. The server answers commands in order, so a PONG also means
   * every line written before the PING has been processed (and any error for it sent).
   */
  ping(timeoutMs: number): Promise<'pong' | 'timeout' | 'closed'> {
    if (!this.open) return Promise.resolve('closed');
    const token = `homing-${++this.pingSeq}`;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pings.delete(token);
        resolve('timeout');
      }, timeoutMs);
      this.pings.set(token, (result) => {
        clearTimeout(timer);
        resolve(result);
      });
      this.client.raw('PING', token);
    });
  }

  /** Collects the first "cannot deliver" numeric for `target` until `stop()` is called. */
  watchTarget(target: string): { stop(): string | undefined } {
    let error: string | undefined;
    const wanted = this.caseLower(target);
    const watcher = (erroring: string, message: string): void => {
      if (error === undefined && this.caseLower(erroring) === wanted) error = message;
    };
    this.targetWatchers.add(watcher);
    return {
      stop: () => {
        this.targetWatchers.delete(watcher);
        return error;
      },
    };
  }

  /** Leaves politely; `closed` follows. */
  quit(message: string): void {
    this.quitRequested = true;
    if (this.open) this.client.quit(message);
  }

  /** Drops the socket at once (a dead connection after sleep may never finish a polite close). */
  destroy(): void {
    if (this.open) this.client.connection.end(null, true);
  }

  private onLine(line: IrcParsedLine): void {
    const { command, params } = line;
    this.trackPresence(line);
    if (command === '005') this.nickLength = nickLengthFrom(params) ?? this.nickLength;
    if (TARGET_ERRORS.has(command) && params[1]) {
      for (const watcher of this.targetWatchers) watcher(params[1], `${command} ${params.slice(1).join(' ')}`);
    }
    if (this.registeredNick === undefined) {
      this.onRegistrationLine(line);
    } else if (JOIN_ERRORS.has(command) && params[1] && this.config.channels.some((c) => this.caseLower(c) === this.caseLower(params[1]!))) {
      this.events.joinFailed(params[1], params[params.length - 1] ?? command);
    }
  }

  /** Our channels, the account book and WHOIS answers, from the lines themselves. */
  private trackPresence({ command, params, nick }: IrcParsedLine): void {
    const self = nick !== '' && this.registeredNick !== undefined && this.caseLower(nick) === this.caseLower(this.client.user.nick);
    switch (command) {
      case 'JOIN':
        if (!params[0]) return;
        if (self) {
          this.joined.add(this.caseLower(params[0]));
          this.events.joined?.(params[0]);
        }
        else if (nick && this.capEnabled('extended-join') && params[1] !== undefined) this.book.set(nick, params[1]);
        return;
      case 'PART':
        if (!params[0]) return;
        if (self) this.joined.delete(this.caseLower(params[0]));
        else if (nick) this.book.forget(nick);
        return;
      case 'KICK':
        if (!params[0] || !params[1]) return;
        if (this.caseLower(params[1]) === this.caseLower(this.client.user.nick)) this.joined.delete(this.caseLower(params[0]));
        else this.book.forget(params[1]);
        return;
      case 'QUIT':
        if (nick) this.book.forget(nick);
        return;
      case 'NICK':
        if (nick && params[0]) this.book.renamed(nick, params[0]);
        return;
      case 'ACCOUNT':
        if (nick && params[0] !== undefined) this.book.set(nick, params[0]);
        return;
      case '330': {
        // <me> <nick> <account> :is logged in as
        const entry = params[1] ? this.whoisPending.get(this.caseLower(params[1])) : undefined;
        if (entry && params[2]) entry.account = params[2];
        return;
      }
      case '318': // end of WHOIS
      case '401': {
        // no such nick: nobody holds it, so nobody is logged in under it
        if (!params[1]) return;
        const key = this.caseLower(params[1]);
        this.settleWhois(key, this.whoisPending.get(key)?.account ?? null);
        return;
      }
    }
  }

  private onRegistrationLine({ command, params }: IrcParsedLine): void {
    switch (command) {
      case '433': // nick in use
      case '432': // erroneous nick (too long for this server, say)
      case '437': {
        const refused = params[1] ?? '';
        // 432 before any ISUPPORT: most likely too long for a server that keeps RFC 1459's 9 (ngircd's default).
        if (command === '432' && this.nickLength === Infinity && refused.length > RFC_NICKLEN) this.nickLength = RFC_NICKLEN;
        const next = alternativeNick(this.config.nick, ++this.nickAttempt, this.nickLength);
        if (next === undefined) {
          // The connection closes and the adapter reconnects with its growing backoff.
          this.logger.warn('irc: no free nick, giving up on this connection', { nick: this.config.nick, tried: this.nickAttempt - 1 });
          this.destroy();
          return;
        }
        // One line for the first refusal; the rest are debug, so a crowded server does not flood the log.
        this.logger[this.nickAttempt === 1 ? 'info' : 'debug']('irc: nick refused, trying another', { refused, reason: command, next });
        this.client.changeNick(next);
        return;
      }
      case '464':
      case '465':
        this.authError = `${command} ${params[params.length - 1] ?? ''}`.trim();
        return;
      case 'ERROR': {
        // ngircd sends no 464, only "ERROR :Access denied: Bad password?".
        const reason = params[params.length - 1] ?? '';
        if (/password|access denied|banned|k-?lined/i.test(reason)) this.authError = reason;
        return;
      }
    }
  }

  private onClose(error: string): void {
    if (this.closedReason) return;
    const reason: CloseReason = this.quitRequested
      ? { kind: 'requested' }
      : this.authError
        ? { kind: 'auth-failed', error: this.authError }
        : { kind: 'dropped', error };
    this.closedReason = reason;
    for (const resolve of this.pings.values()) resolve('closed');
    this.pings.clear();
    for (const key of [...this.whoisPending.keys()]) this.settleWhois(key, undefined);
    this.joined.clear();
    this.book.clear();
    this.client.removeAllListeners();
    this.resolveClosed(reason);
    this.events.closed(reason);
  }
}
