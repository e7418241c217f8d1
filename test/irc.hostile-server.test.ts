import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InboundMessage, SendTarget } from '../src/main/gateway/platforms/adapter';
import { ircConfigSchema } from '../src/main/gateway/platforms/irc/config-schema';
import { IrcAdapter } from '../src/main/gateway/platforms/irc/irc-adapter';
import { FAKE_SERVER_NAME, startFakeIrcServer, type FakeIrcClient, type FakeIrcServer } from './support/fake-irc-server';
import { BROKEN_FRAMING, KNOWN_KILLERS, serverLine } from './support/hostile-irc-lines';
import { FAST_IRC } from './support/ngircd';
import { waitUntil } from './support/wait';

/**
 * A hostile or broken IRC server must never kill the gateway: the real adapter
 * against a fake server (a real one never sends these) that registers it
 * properly and then feeds it thousands of generated lines — malformed, truncated,
 * tagged, numerics with missing parameters — after which the adapter must still
 * be connected, still send, and still receive.
 */

const target = (chatId: string): SendTarget => ({ chatId, threadId: null, replyTo: null, idempotencyKey: `key-${chatId}` });

describe('the IRC adapter against a hostile server', () => {
  let server: FakeIrcServer;
  let adapter: IrcAdapter;
  let inbound: InboundMessage[];

  beforeEach(async () => {
    server = await startFakeIrcServer({ caps: ['account-tag', 'extended-join', 'account-notify', 'batch', 'server-time', 'message-tags'] });
    adapter = new IrcAdapter({
      config: ircConfigSchema.parse({ host: server.host, port: server.port, tls: false, nick: 'homing', channels: ['#homing'], allow: ['alice'] }),
      ...FAST_IRC,
      pacing: { burst: 1_000, intervalMs: 1 },
      // Lines such as a stray PING make the adapter wait for answers that never come.
      ackTimeoutMs: 2_000,
    });
    inbound = [];
    adapter.onEvent((event) => {
      if (event.type === 'message') inbound.push(event.message);
    });
    await adapter.connect();
  });

  afterEach(async () => {
    await adapter.disconnect();
    await server.close();
  });

  /** After the storm: the connection is the same one, and sends and receives still work. */
  async function stillWorks(client: FakeIrcClient): Promise<void> {
    // Undo what a hostile server may legitimately have changed (chantypes, casemapping, our nick).
    client.send(`:${FAKE_SERVER_NAME} 005 homing CHANTYPES=# CASEMAPPING=rfc1459 :are supported by this server`);
    await client.roundTrip();
    expect(server.clients).toHaveLength(1);
    expect(adapter.state()).toMatch(/^(connected|degraded)$/);
    const before = inbound.length;
    client.send(`:alice!a@fake.host PRIVMSG ${adapter.currentNick()} :still there?`);
    await waitUntil('the message after the storm', () => inbound.length === before + 1);
    expect(inbound.at(-1)).toMatchObject({ text: 'still there?', source: { chatId: 'alice', senderId: 'alice' } });
    expect(await adapter.send('yes, still here', target('alice'))).toMatchObject({ ok: true });
    expect(client.privmsgs().at(-1)).toEqual({ target: 'alice', text: 'yes, still here' });
  }

  it('survives each line that used to throw inside irc-framework', async () => {
    const client = await server.registered();
    await waitUntil('connected', () => adapter.state() === 'connected');
    for (const line of KNOWN_KILLERS) client.send(line);
    await stillWorks(client);
  });

  it('survives thousands of generated server lines and still sends and receives', async () => {
    const client = await server.registered();
    await waitUntil('connected', () => adapter.state() === 'connected');
    let fed = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(serverLine, { minLength: 20, maxLength: 60 }), async (lines) => {
        for (const line of lines) client.send(line);
        fed += lines.length;
        await client.roundTrip();
        return server.clients.length === 1 && !client.socket.destroyed && adapter.currentNick() !== undefined;
      }),
      { numRuns: 100, seed: 12_012 },
    );
    expect(fed).toBeGreaterThan(3_000);
    await stillWorks(client);
  }, 60_000);

  it('survives broken framing: bare LF, NUL bytes, invalid UTF-8, an over-long line', async () => {
    const client = await server.registered();
    await waitUntil('connected', () => adapter.state() === 'connected');
    for (const bytes of BROKEN_FRAMING) client.sendRaw(bytes);
    await stillWorks(client);
  });

  it('drops a server that never ends its line instead of buffering it without limit, then reconnects', async () => {
    const first = await server.registered();
    await waitUntil('connected', () => adapter.state() === 'connected');
    // 1 MiB with no line feed, in pieces, as a hostile server would trickle it.
    const piece = Buffer.alloc(16 * 1024, 0x78);
    for (let i = 0; i < 64 && !first.socket.destroyed; i++) {
      first.sendRaw(piece);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await waitUntil('the connection dropped', () => first.socket.destroyed || adapter.state() !== 'connected');
    // The adapter comes back on a fresh connection, which works.
    await waitUntil('a second connection, registered', () => server.clients.at(-1) !== first && server.clients.at(-1)!.nick() !== undefined);
    const second = server.clients.at(-1)!;
    await waitUntil('connected again', () => adapter.state() === 'connected');
    expect(await adapter.send('back again', target('alice'))).toMatchObject({ ok: true });
    expect(second.privmsgs().at(-1)).toEqual({ target: 'alice', text: 'back again' });
  });
});
