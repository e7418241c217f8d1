import { afterEach, describe, expect, it } from 'vitest';
import { ircConfigSchema } from '../src/main/gateway/platforms/irc/config-schema';
import { IrcAdapter } from '../src/main/gateway/platforms/irc/irc-adapter';
import type { Logger } from '../src/main/gateway/logger';
import { connectIrcUser, type IrcUser } from './support/irc-user';
import { FAST_IRC, startNgircd, type RunningNgircd } from './support/ngircd';
import { waitUntil } from './support/wait';

/**
 * Issue 13: the nick fallback fits the server's NICKLEN. ngircd's default
 * limit is 9, so `homingbot_` (10) can never work; with the limit respected
 * the adapter registers as a 9-character alternative, in a few lines of log.
 */

let server: RunningNgircd | undefined;
let holder: IrcUser | undefined;
let adapter: IrcAdapter | undefined;
afterEach(async () => {
  await adapter?.disconnect();
  await holder?.quit();
  await server?.dispose();
});

describe('the IRC nick fallback against ngircd with its default 9-character nicks', () => {
  it('registers as an alternative nick that fits, logging one line for it', async () => {
    server = await startNgircd({ maxNickLength: 9 });
    holder = await connectIrcUser(server, 'homingbot');
    const lines: string[] = [];
    const logger: Logger = {
      debug: () => {},
      info: (message) => lines.push(message),
      warn: (message) => lines.push(message),
      error: (message) => lines.push(message),
    };
    adapter = new IrcAdapter({
      config: ircConfigSchema.parse({ host: server.host, port: server.port, tls: false, nick: 'homingbot', channels: [], allow: [] }),
      logger,
      ...FAST_IRC,
    });
    await adapter.connect();
    await waitUntil('the adapter to register', () => adapter!.state() === 'connected', 10_000);
    const nickLines = lines.filter((line) => /nick/.test(line));
    expect(nickLines).toEqual(['irc: nick refused, trying another', 'irc: connected under another nick']);
    expect(lines).not.toContain('irc: no free nick, giving up on this connection');
  });
});
