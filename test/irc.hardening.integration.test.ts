import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AdapterEvent, SendTarget } from '../src/main/gateway/platforms/adapter';
import { ircConfigSchema, type IrcConfig, type IrcConfigInput } from '../src/main/gateway/platforms/irc/config-schema';
import { IrcAdapter } from '../src/main/gateway/platforms/irc/irc-adapter';
import { connectIrcUser, type IrcUser } from './support/irc-user';
import { FAST_IRC, startNgircd, type RunningNgircd } from './support/ngircd';
import { waitUntil } from './support/wait';

/**
 * Hardening of the IRC adapter against a real ngircd: a degraded connection
 * still sends where it can, CTCP answers are rate-limited, a nick allowlist
 * works (and an account entry cannot be met on a server without services),
 * and a control character in a setting never reaches the wire.
 */

const target = (chatId: string): SendTarget => ({ chatId, threadId: null, replyTo: null, idempotencyKey: `key-${chatId}` });

describe('IRC hardening against ngircd', () => {
  let server: RunningNgircd;
  const cleanups: (() => Promise<void>)[] = [];
  beforeEach(async () => {
    server = await startNgircd();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await server.dispose();
  });

  async function user(nick: string, channels: string[] = []): Promise<IrcUser> {
    const person = await connectIrcUser(server, nick, channels);
    cleanups.push(() => person.quit());
    return person;
  }

  function bot(config: Partial<IrcConfigInput> | IrcConfig, raw = false) {
    const refused: string[] = [];
    const adapter = new IrcAdapter({
      config: raw
        ? (config as IrcConfig)
        : ircConfigSchema.parse({ host: server.host, port: server.port, tls: false, nick: 'homing', channels: ['#homing'], allow: ['alice'], ...config }),
      ...FAST_IRC,
      onRefused: (nick) => refused.push(nick),
    });
    const events: AdapterEvent[] = [];
    adapter.onEvent((event) => events.push(event));
    cleanups.push(() => adapter.disconnect());
    return { adapter, events, refused, messages: () => events.flatMap((event) => (event.type === 'message' ? [event.message] : [])) };
  }

  it('a degraded connection (one channel refused) still sends to the channels it joined and to nicks, and not where it is not', async () => {
    const carol = await user('carol', ['#locked']);
    carol.client.raw('MODE', '#locked', '+k', 'sekrit');
    await carol.roundTrip();
    const alice = await user('alice', ['#homing']);
    const { adapter } = bot({ channels: ['#homing', '#locked'] });
    await adapter.connect();
    await waitUntil('degraded', () => adapter.state() === 'degraded');
    await waitUntil('the bot in #homing', () => alice.joins.some((join) => join.nick === 'homing'));

    expect(adapter.canSend({ chatId: '#homing', threadId: null })).toBe(true);
    expect(adapter.canSend({ chatId: 'alice', threadId: null })).toBe(true);
    expect(adapter.canSend({ chatId: '#locked', threadId: null })).toBe(false);
    expect(adapter.canSend({ chatId: '#LOCKED', threadId: null })).toBe(false);

    expect(await adapter.send('to the channel', target('#homing'))).toMatchObject({ ok: true });
    expect(await adapter.send('to you', target('alice'))).toMatchObject({ ok: true });
    await waitUntil('both lines', () => alice.privmsgs.filter((event) => event.nick === 'homing').length === 2);
    expect(alice.privmsgs.filter((event) => event.nick === 'homing').map((event) => [event.target, event.message])).toEqual([
      ['#homing', 'to the channel'],
      ['alice', 'to you'],
    ]);
  });

  it('cannot send before it is connected, and not to a channel it was kicked from', async () => {
    const alice = await user('alice', ['#homing']);
    const { adapter } = bot({});
    expect(adapter.canSend({ chatId: 'alice', threadId: null })).toBe(false);
    await adapter.connect();
    await waitUntil('the bot in #homing', () => adapter.canSend({ chatId: '#homing', threadId: null }));
    alice.client.raw('KICK', '#homing', 'homing', 'out');
    await waitUntil('kicked', () => !adapter.canSend({ chatId: '#homing', threadId: null }));
    expect(adapter.canSend({ chatId: 'alice', threadId: null })).toBe(true);
  });

  it('answers CTCP VERSION once per sender per minute, however often it is asked', async () => {
    const mallory = await user('mallory');
    const { adapter } = bot({});
    await adapter.connect();
    await waitUntil('connected', () => adapter.state() === 'connected');
    for (let index = 0; index < 20; index++) mallory.client.ctcpRequest('homing', 'VERSION');
    await waitUntil('one answer', () => mallory.rawLines.some((line) => line.includes('\x01VERSION Homing\x01')));
    // A round trip through the bot: its answer to a later line comes after any earlier answer.
    await adapter.send('ping through', target('mallory'));
    await waitUntil('the marker', () => mallory.privmsgs.some((event) => event.message === 'ping through'));
    await mallory.roundTrip();
    expect(mallory.rawLines.filter((line) => line.includes('\x01VERSION'))).toHaveLength(1);
  });

  it('allows by nick on a server without accounts, and never lets an account entry in there', async () => {
    const alice = await user('alice');
    const bob = await user('bob');
    const { adapter, refused, messages } = bot({ allow: ['alice', { nick: 'bob', account: 'bob' }] });
    await adapter.connect();
    await waitUntil('connected', () => adapter.state() === 'connected');
    alice.client.say('homing', 'from alice');
    bob.client.say('homing', 'from bob');
    await waitUntil('bob refused', () => refused.includes('bob'));
    expect(messages().map((message) => message.text)).toEqual(['from alice']);
  });

  it('refuses to connect with a control character in a setting that did not pass the schema (a stored password)', async () => {
    const watcher = await user('watcher', ['#homing']);
    const config = ircConfigSchema.parse({ host: server.host, port: server.port, tls: false, nick: 'homing', channels: ['#homing'] });
    const { adapter, events } = bot({ ...config, password: 'x\r\nJOIN #homing' }, true);
    await adapter.connect();
    expect(adapter.state()).toBe('auth-failed');
    expect(events.at(-1)).toMatchObject({ type: 'state', state: 'auth-failed', error: expect.stringMatching(/"password" contains a control character/) });
    await watcher.roundTrip();
    expect(watcher.joins.filter((join) => join.nick !== 'watcher')).toEqual([]);
  });
});
