import { createConnection, type Socket } from 'node:net';
import type { RunningNgircd } from './ngircd';
import { waitUntil } from './wait';

/**
 * A throwaway nick on a real ngircd, as a flood brings hundreds of them: a bare
 * socket that registers, answers PINGs and records the NOTICEs it receives. An
 * irc-framework client each would cost the test far more than the flood costs
 * the bot.
 */
export interface CrowdNick {
  readonly nick: string;
  /** The text of each NOTICE sent to this nick, in order. */
  readonly notices: string[];
  say(target: string, text: string): void;
  close(): void;
}

export async function connectCrowdNick(server: Pick<RunningNgircd, 'host' | 'port'>, nick: string): Promise<CrowdNick> {
  const socket: Socket = createConnection({ host: server.host, port: server.port });
  socket.setEncoding('utf8');
  const notices: string[] = [];
  let registered = false;
  let buffer = '';
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let end: number;
    while ((end = buffer.indexOf('\r\n')) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (line.startsWith('PING ')) socket.write(`PONG ${line.slice(5)}\r\n`);
      else if (/^:\S+ 001 /.test(line)) registered = true;
      const notice = new RegExp(`^:\\S+ NOTICE ${nick} :(.*)$`, 'i').exec(line);
      if (notice) notices.push(notice[1]!);
    }
  });
  socket.on('error', () => undefined); // a closed test server; the test's own checks say what went wrong
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  socket.write(`NICK ${nick}\r\nUSER ${nick} 0 * :${nick}\r\n`);
  await waitUntil(`${nick} to register`, () => registered, 10_000);
  return {
    nick,
    notices,
    say: (target, text) => socket.write(`PRIVMSG ${target} :${text}\r\n`),
    close: () => {
      socket.end('QUIT :bye\r\n');
      socket.destroy();
    },
  };
}
