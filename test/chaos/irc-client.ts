import { createConnection, type Socket } from 'node:net';
import { LineSplitter, parseIrcLine, type IrcLine } from './irc-line';

/** A PRIVMSG as one of the harness's people received it. */
export interface ReceivedLine {
  readonly at: number;
  readonly from: string;
  readonly target: string;
  readonly text: string;
}

export interface ChaosIrcClientOptions {
  readonly host: string;
  readonly port: number;
  readonly nick: string;
  readonly channel: string;
  /** Every line from the server, parsed, as it arrives (for the observer's bookkeeping). */
  readonly onLine?: (line: IrcLine, at: number) => void;
  readonly log?: (message: string) => void;
}

const RECONNECT_MS = 100;

/**
 * A person on IRC, written on a raw TCP socket: registers, joins the chaos
 * channel, answers PING, records every PRIVMSG that reaches it in arrival order,
 * and reconnects every 100 ms while the server is away (so it is back in the
 * channel before the bot, whose first retry waits about a second).
 */
export class ChaosIrcClient {
  readonly received: ReceivedLine[] = [];
  private socket: Socket | undefined;
  private joined = false;
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readyWaiters: (() => void)[] = [];
  /** Times (ms) this client was out of the channel: [left, back] (back undefined while out). */
  readonly gaps: { from: number; to: number | undefined }[] = [];

  constructor(private readonly options: ChaosIrcClientOptions) {}

  get nick(): string {
    return this.options.nick;
  }

  /** Registered and in the channel. */
  get ready(): boolean {
    return this.joined;
  }

  start(): void {
    this.stopped = false;
    this.connect();
  }

  /** Resolves once the client is in the channel (or rejects after `timeoutMs`). */
  whenReady(timeoutMs = 10_000): Promise<void> {
    if (this.joined) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.readyWaiters = this.readyWaiters.filter((waiter) => waiter !== done);
        reject(new Error(`${this.nick} did not join ${this.options.channel} in ${timeoutMs} ms`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.readyWaiters.push(done);
    });
  }

  /** Sends a PRIVMSG if the client is in the channel; false when it is not (nothing was sent). */
  say(target: string, text: string): boolean {
    if (!this.joined || !this.socket || this.socket.destroyed) return false;
    this.socket.write(`PRIVMSG ${target} :${text}\r\n`);
    return true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const socket = this.socket;
    if (!socket || socket.destroyed) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        socket.destroy();
        resolve();
      }, 500);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.end('QUIT :done\r\n');
    });
  }

  private connect(): void {
    if (this.stopped) return;
    const socket = createConnection({ host: this.options.host, port: this.options.port });
    this.socket = socket;
    socket.setNoDelay(true);
    const splitter = new LineSplitter();
    socket.on('error', () => {
      // A refused or reset connection: 'close' follows and schedules the retry.
    });
    socket.on('connect', () => {
      socket.write(`NICK ${this.nick}\r\nUSER ${this.nick} 0 * :chaos harness\r\n`);
    });
    socket.on('data', (data: Buffer) => {
      const at = Date.now();
      for (const raw of splitter.push(data)) {
        const line = parseIrcLine(raw);
        if (line) this.onLine(socket, line, at);
      }
    });
    socket.on('close', () => {
      if (this.socket !== socket) return;
      if (this.joined) this.gaps.push({ from: Date.now(), to: undefined });
      this.joined = false;
      this.socket = undefined;
      if (this.stopped) return;
      this.timer = setTimeout(() => this.connect(), RECONNECT_MS);
    });
  }

  private onLine(socket: Socket, line: IrcLine, at: number): void {
    switch (line.command) {
      case 'PING':
        socket.write(`PONG :${line.params.at(-1) ?? ''}\r\n`);
        break;
      case '001':
        socket.write(`JOIN ${this.options.channel}\r\n`);
        break;
      case '433':
        // Our nick is still held by our previous connection (the server has not
        // seen it close yet): try again shortly with the same nick.
        socket.destroy();
        break;
      case 'JOIN':
        if (line.nick === this.nick && !this.joined) {
          this.joined = true;
          const gap = this.gaps.at(-1);
          if (gap && gap.to === undefined) gap.to = at;
          for (const waiter of this.readyWaiters.splice(0)) waiter();
        }
        break;
      case 'PRIVMSG':
        this.received.push({ at, from: line.nick, target: line.params[0] ?? '', text: line.params[1] ?? '' });
        break;
    }
    this.options.onLine?.(line, at);
  }
}
