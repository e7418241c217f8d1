import ircFramework, { type Client, type IrcMessageEvent, type IrcParsedLine } from 'irc-framework';
import type { Logger } from '../../logger';
import type { IrcConfig } from './config-schema';
import { alternativeNick } from './nick';

/** Why a connection ended, as far as the adapter's next step is concerned. */
export type CloseReason =
  | { readonly kind: 'dropped'; readonly error: string }
  /** The server refused our credentials (464, "Bad password", a ban): retrying will not help. */
  | { readonly kind: 'auth-failed'; readonly error: string }
  | { readonly kind: 'requested' };

export interface ConnectionEvents {
  registered(nick: string): void;
  joinFailed(channel: string, reason: string): void;
  message(kind: 'privmsg' | 'action', event: IrcMessageEvent): void;
  closed(reason: CloseReason): void;
}

/** Numerics that mean "this target will not take messages": 401 no such nick/channel, 403 no such channel, 404 cannot send. */
const TARGET_ERRORS = new Set(['401', '403', '404']);
/** Numerics that refuse a JOIN. */
const JOIN_ERRORS = new Set(['403', '405', '471', '473', '474', '475', '477']);

/**
 * One connection attempt to the server with one irc-framework client: registration
 * (falling back to other nicks), PING round trips, per-target error watching. The
 * adapter makes a new one per attempt, so no state leaks from a dead connection.
 */
export class IrcConnection {
  private readonly client: Client;
  private nickAttempt = 0;
  private registeredNick: string | undefined;
  private authError: string | undefined;
  private closedReason: CloseReason | undefined;
  private quitRequested = false;
  private pingSeq = 0;
  private readonly pings = new Map<string, (result: 'pong' | 'closed') => void>();
  private readonly targetWatchers = new Set<(target: string, error: string) => void>();
  private resolveClosed: (reason: CloseReason) => void = () => {};
  /** Settles once, when the socket has closed. */
  readonly whenClosed = new Promise<CloseReason>((resolve) => (this.resolveClosed = resolve));

  constructor(
    private readonly config: IrcConfig,
    private readonly events: ConnectionEvents,
    private readonly logger: Logger,
  ) {
    this.client = new ircFramework.Client({
      host: config.host,
      port: config.port,
      tls: config.tls,
      rejectUnauthorized: true,
      nick: config.nick,
      username: config.username ?? config.nick.slice(0, 10),
      gecos: config.realname ?? 'Homing',
      ...(config.password ? { password: config.password } : {}),
      version: 'Homing',
      // The adapter reconnects itself, with its own backoff and state events.
      auto_reconnect: false,
      ping_interval: 30,
      ping_timeout: 120,
    });
    this.client.on('raw', (event: { line: string; from_server: boolean }) => {
      if (!event.from_server) return;
      const parsed = ircFramework.ircLineParser(event.line);
      if (parsed) this.onLine(parsed);
    });
    this.client.on('registered', (event: { nick: string }) => {
      this.registeredNick = event.nick;
      this.events.registered(event.nick);
      for (const channel of config.channels) this.client.join(channel);
    });
    this.client.on('privmsg', (event: IrcMessageEvent) => this.events.message('privmsg', event));
    this.client.on('action', (event: IrcMessageEvent) => this.events.message('action', event));
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
    if (TARGET_ERRORS.has(command) && params[1]) {
      for (const watcher of this.targetWatchers) watcher(params[1], `${command} ${params.slice(1).join(' ')}`);
    }
    if (this.registeredNick === undefined) {
      this.onRegistrationLine(line);
    } else if (JOIN_ERRORS.has(command) && params[1] && this.config.channels.some((c) => this.caseLower(c) === this.caseLower(params[1]!))) {
      this.events.joinFailed(params[1], params[params.length - 1] ?? command);
    }
  }

  private onRegistrationLine({ command, params }: IrcParsedLine): void {
    switch (command) {
      case '433': // nick in use
      case '432': // erroneous nick (too long for this server, say)
      case '437': {
        const next = alternativeNick(this.config.nick, ++this.nickAttempt);
        if (next === undefined) {
          this.logger.warn('irc: no free nick, giving up on this connection', { nick: this.config.nick });
          this.destroy();
          return;
        }
        this.logger.info('irc: nick taken, trying another', { taken: params[1], next });
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
    this.client.removeAllListeners();
    this.resolveClosed(reason);
    this.events.closed(reason);
  }
}
