import { createConnection, type Server, type Socket } from 'node:net';
import { listenAgain, stopListening } from '../support/ports';
import { LineSplitter, parseIrcLine, type IrcLine } from './irc-line';

/** One line the IRC server handed to the bot's socket, and the bot connection it went to. */
export interface HandedLine {
  readonly at: number;
  readonly connection: number;
  readonly line: IrcLine;
}

/**
 * A byte-for-byte TCP relay between the gateway's IRC adapter and the real
 * ngircd, on loopback. It changes nothing on the wire; it exists for two reasons:
 *
 *  - It sees exactly which lines the server handed to the bot, and when the bot's
 *    connection ended, so "IRC handed this message to Homing" is a fact, not a guess.
 *  - It can be closed (the port refuses connections, as a server that is down
 *    does) while ngircd restarts, and opened only once the harness's people are
 *    back in the channel. Otherwise the bot could rejoin first and the observer
 *    would miss lines the bot really sent, which would count as lost.
 */
export class BotProxy {
  readonly handed: HandedLine[] = [];
  /** PRIVMSG lines the bot wrote to the server. */
  readonly botSent: HandedLine[] = [];
  /** When each bot connection (by number) closed. */
  readonly closedAt = new Map<number, number>();
  private server: Server | undefined;
  private readonly pairs = new Set<{ bot: Socket; upstream: Socket }>();
  private connections = 0;

  constructor(
    readonly port: number,
    private readonly upstreamPort: number,
  ) {}

  get isOpen(): boolean {
    return this.server !== undefined;
  }

  async open(): Promise<void> {
    if (this.server) return;
    this.server = await listenAgain(this.port, (bot) => this.relay(bot));
  }

  /**
   * Refuses new connections from now on; connections already relayed stay up.
   * (`server.close`'s callback waits for those to end: not awaited.)
   */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await stopListening(server);
  }

  /** Closes the port and every relayed connection. */
  async dispose(): Promise<void> {
    const closing = this.close();
    for (const pair of this.pairs) {
      pair.bot.destroy();
      pair.upstream.destroy();
    }
    await closing;
  }

  private relay(bot: Socket): void {
    const id = ++this.connections;
    const upstream = createConnection({ host: '127.0.0.1', port: this.upstreamPort });
    const pair = { bot, upstream };
    this.pairs.add(pair);
    bot.setNoDelay(true);
    upstream.setNoDelay(true);
    const splitter = new LineSplitter();
    const botSplitter = new LineSplitter();
    const end = () => {
      if (!this.pairs.delete(pair)) return;
      this.closedAt.set(id, Date.now());
      bot.destroy();
      upstream.destroy();
    };
    bot.on('error', end);
    upstream.on('error', end);
    bot.on('close', end);
    upstream.on('close', end);
    bot.on('data', (data: Buffer) => {
      const at = Date.now();
      for (const raw of botSplitter.push(data)) {
        const line = parseIrcLine(raw);
        if (line?.command === 'PRIVMSG') this.botSent.push({ at, connection: id, line });
      }
      if (!upstream.destroyed) upstream.write(data);
    });
    upstream.on('data', (data: Buffer) => {
      const at = Date.now();
      for (const raw of splitter.push(data)) {
        const line = parseIrcLine(raw);
        if (line?.command === 'PRIVMSG') this.handed.push({ at, connection: id, line });
      }
      if (!bot.destroyed) bot.write(data);
    });
  }
}
