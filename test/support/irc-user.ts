import ircFramework, { type Client, type IrcMessageEvent } from 'irc-framework';
import type { RunningNgircd } from './ngircd';
import { waitUntil } from './wait';

/**
 * A person on IRC for the tests: a plain irc-framework client on a real ngircd
 * that records everything that reaches it, in the order the server sent it.
 */
export interface IrcUser {
  readonly client: Client;
  readonly nick: string;
  readonly privmsgs: IrcMessageEvent[];
  readonly notices: IrcMessageEvent[];
  readonly joins: { nick: string; channel: string }[];
  /** Raw lines from the server, as the user's client received them. */
  readonly rawLines: string[];
  /**
   * A PING round trip to the server: once it returns, every line the server
   * relayed to us before it processed our PING has been received.
   */
  roundTrip(timeoutMs?: number): Promise<void>;
  quit(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function connectIrcUser(server: Pick<RunningNgircd, 'host' | 'port'>, nick: string, channels: string[] = []): Promise<IrcUser> {
  const client = new ircFramework.Client();
  let pings = 0;
  const user: IrcUser = {
    client,
    nick,
    privmsgs: [],
    notices: [],
    joins: [],
    rawLines: [],
    roundTrip: async (timeoutMs = 5_000) => {
      const token = `${nick}-rt-${++pings}`;
      const seen = user.rawLines.length;
      client.raw('PING', token);
      await waitUntil(`PONG ${token}`, () => user.rawLines.slice(seen).some((line) => / PONG /.test(line) && line.endsWith(token)), timeoutMs);
    },
    quit: async () => {
      if (!client.connected) return;
      const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
      client.quit('bye');
      await Promise.race([closed, sleep(1_000)]);
    },
  };
  client.on('privmsg', (event: IrcMessageEvent) => user.privmsgs.push(event));
  client.on('notice', (event: IrcMessageEvent) => user.notices.push(event));
  client.on('join', (event: { nick: string; channel: string }) => user.joins.push(event));
  client.on('raw', (event: { line: string; from_server: boolean }) => {
    if (event.from_server) user.rawLines.push(event.line.replace(/\r?\n$/, ''));
  });
  const registered = new Promise<void>((resolve, reject) => {
    client.once('registered', () => resolve());
    client.once('close', () => reject(new Error(`${nick} could not register on ${server.host}:${server.port}`)));
  });
  client.connect({ host: server.host, port: server.port, nick, auto_reconnect: false, ping_interval: 0, ping_timeout: 0 });
  await registered;
  for (const channel of channels) client.join(channel);
  await waitUntil(`${nick} to join ${channels.join(', ')}`, () =>
    channels.every((channel) => user.joins.some((join) => join.nick === nick && join.channel === channel)),
  );
  return user;
}

/** The PRIVMSGs `nick` sent to the user (or a channel the user is in), in order. */
export function linesFrom(user: IrcUser, nick: string, target?: string): string[] {
  return user.privmsgs.filter((event) => event.nick === nick && (target === undefined || event.target === target)).map((event) => event.message);
}
