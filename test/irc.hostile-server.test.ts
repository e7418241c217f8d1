import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InboundMessage, SendTarget } from '../src/main/gateway/platforms/adapter';
import { ircConfigSchema } from '../src/main/gateway/platforms/irc/config-schema';
import { IrcAdapter } from '../src/main/gateway/platforms/irc/irc-adapter';
import { FAKE_SERVER_NAME, startFakeIrcServer, type FakeIrcClient, type FakeIrcServer } from './support/fake-irc-server';
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

/** The lines issue 12 found: each threw inside irc-framework's socket handler. */
const KNOWN_KILLERS = [
  ':x!u@h PRIVMSG',
  ':x!u@h NOTICE',
  ':x!u@h PRIVMSG homing',
  `:${FAKE_SERVER_NAME} CAP`,
  `:${FAKE_SERVER_NAME} CAP *`,
  ':x!u@h BATCH',
  `:${FAKE_SERVER_NAME} 353`,
  `:${FAKE_SERVER_NAME} 353 homing`,
  `:${FAKE_SERVER_NAME} 366`,
  `:${FAKE_SERVER_NAME} 311`,
  `:${FAKE_SERVER_NAME} 352 homing`,
  `:${FAKE_SERVER_NAME} 900 homing`,
  `:${FAKE_SERVER_NAME} 333 homing #homing`,
  `:${FAKE_SERVER_NAME} 732`,
  `@batch=zz :${FAKE_SERVER_NAME} BATCH -zz`,
];

const COMMANDS = [
  'PRIVMSG', 'NOTICE', 'TAGMSG', 'CAP', 'BATCH', 'JOIN', 'PART', 'KICK', 'QUIT', 'NICK', 'TOPIC', 'INVITE', 'MODE',
  'ACCOUNT', 'CHGHOST', 'SETNAME', 'AWAY', 'AUTHENTICATE', 'PING', 'PONG', 'ERROR', 'WALLOPS',
  '001', '002', '004', '005', '221', '251', '276', '301', '303', '305', '306', '307', '311', '312', '313', '314', '315',
  '317', '318', '319', '320', '321', '322', '323', '324', '328', '329', '330', '331', '332', '333', '335', '338', '341',
  '344', '346', '347', '348', '349', '352', '353', '354', '364', '365', '366', '367', '368', '369', '372', '375', '376',
  '378', '379', '396', '401', '403', '404', '405', '406', '432', '433', '471', '473', '474', '475', '671', '730', '731',
  '732', '900', '901', '903', '904',
];

/** Tokens a server line is made of, the awkward ones on purpose; never `alice`, whose messages the test counts. */
const token = fc.oneof(
  fc.constantFrom('', '*', '+', '-', ':', '=', '@', '#homing', '#other', 'homing', 'bob', 'LS', 'ACK', 'NAK', 'NEW', 'DEL', 'END', '+zz', '-zz', 'account-tag', 'extended-join', '\x01VERSION\x01', '\x01', 'CHANTYPES=', 'CASEMAPPING=ascii', 'PREFIX=', 'a=b'),
  fc.string({ maxLength: 12 }).map((text) => text.replace(/[\s\0]/g, '')),
);

const serverLine = fc
  .record({
    tags: fc.option(fc.array(fc.tuple(fc.constantFrom('time', 'account', 'batch', 'msgid', 'label', '+x', ''), token), { maxLength: 3 }), { nil: undefined }),
    prefix: fc.option(fc.constantFrom(FAKE_SERVER_NAME, 'x!u@h', 'bob!b@h', 'homing!h@h', 'x', '!', '@', 'x!', '!@'), { nil: undefined }),
    command: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...COMMANDS) }, { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 4 }).map((text) => text.replace(/[\s\0]/g, 'X')) }),
    params: fc.array(token, { maxLength: 9 }),
    trailing: fc.option(fc.string({ maxLength: 40 }).map((text) => text.replace(/[\r\n]/g, ' ')), { nil: undefined }),
  })
  .map(({ tags, prefix, command, params, trailing }) =>
    [
      tags ? `@${tags.map(([key, value]) => (value ? `${key}=${value.replace(/[; ]/g, '')}` : key)).join(';')}` : '',
      prefix ? `:${prefix}` : '',
      command,
      ...params.filter(Boolean),
      trailing === undefined ? '' : `:${trailing}`,
    ]
      .filter(Boolean)
      .join(' '),
  );

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
    client.sendRaw(':x!u@h PRIVMSG homing :bare LF\n\r\n\n:x!u@h NOTICE homing :\0nul\0\r\n');
    client.sendRaw(Buffer.from([0x3a, 0x78, 0x20, 0x50, 0x52, 0x49, 0x56, 0x4d, 0x53, 0x47, 0x20, 0xff, 0xfe, 0x20, 0x3a, 0xc3, 0x28, 0x0d, 0x0a]));
    client.send(`:x!u@h PRIVMSG homing :${'y'.repeat(100_000)}`);
    await stillWorks(client);
  });
});
