import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AdapterEvent, AdapterState, InboundMessage, SendTarget } from '../src/main/gateway/platforms/adapter';
import { splitMessage } from '../src/main/gateway/platforms/chunking';
import { ircConfigSchema, type IrcConfigInput } from '../src/main/gateway/platforms/irc/config-schema';
import { IrcAdapter, type IrcAdapterOptions } from '../src/main/gateway/platforms/irc/irc-adapter';
import { IRC_LINE_BYTES, textBudget, toProtocolLines } from '../src/main/gateway/platforms/irc/lines';
import { connectIrcUser as connectUser, type IrcUser as User } from './support/irc-user';
import { FAST_IRC, startNgircd, type RunningNgircd } from './support/ngircd';
import { waitUntil } from './support/wait';

/**
 * The IRC adapter against a real ngircd on 127.0.0.1, with a second real
 * irc-framework client playing the user. Pacing and backoff are shrunk so the
 * whole file runs in seconds.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Harness {
  readonly adapter: IrcAdapter;
  readonly events: AdapterEvent[];
  readonly refused: string[];
  messages(): InboundMessage[];
  states(): AdapterState[];
}

function makeAdapter(server: RunningNgircd, config: Partial<IrcConfigInput> = {}, options: Partial<IrcAdapterOptions> = {}): Harness {
  const refused: string[] = [];
  const adapter = new IrcAdapter({
    config: ircConfigSchema.parse({
      host: server.host,
      port: server.port,
      tls: false,
      nick: 'homing',
      channels: ['#homing'],
      allow: ['alice'],
      ...config,
    }),
    ...FAST_IRC,
    onRefused: (nick) => refused.push(nick),
    ...options,
  });
  const events: AdapterEvent[] = [];
  adapter.onEvent((event) => events.push(event));
  return {
    adapter,
    events,
    refused,
    messages: () => events.flatMap((event) => (event.type === 'message' ? [event.message] : [])),
    states: () => events.flatMap((event) => (event.type === 'state' ? [event.state] : [])),
  };
}

const target = (chatId: string): SendTarget => ({ chatId, threadId: null, replyTo: null, idempotencyKey: `key-${chatId}` });
const fromBot = (user: User, nick = 'homing') => user.privmsgs.filter((event) => event.nick === nick);

describe('IRC adapter against ngircd', () => {
  let server: RunningNgircd;
  const cleanups: (() => Promise<void>)[] = [];
  const track = <T extends { quit(): Promise<void> } | Harness>(thing: T): T => {
    cleanups.push(async () => ('adapter' in thing ? thing.adapter.disconnect() : thing.quit()));
    return thing;
  };

  beforeEach(async () => {
    server = await startNgircd();
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await server.dispose();
  });

  it('turns addressed channel lines and direct messages into inbound messages, and replies arrive', async () => {
    const alice = track(await connectUser(server, 'alice', ['#homing']));
    const bot = track(makeAdapter(server));
    await bot.adapter.connect();
    await waitUntil('the bot to join #homing', () => alice.joins.some((join) => join.nick === 'homing'));
    expect(bot.adapter.state()).toBe('connected');

    alice.client.say('#homing', 'just chatting with everyone');
    alice.client.say('#homing', 'homing: what time is it?');
    alice.client.say('#homing', 'Homing, and the weather?');
    alice.client.say('homing', 'a private question');
    await waitUntil('three inbound messages', () => bot.messages().length === 3);

    const [first, second, direct] = bot.messages();
    expect(first!.text).toBe('what time is it?');
    expect(first!.source).toMatchObject({ platform: 'irc', chatId: '#homing', chatType: 'group', senderId: 'alice', chatName: '#homing' });
    expect(second!.text).toBe('and the weather?');
    expect(direct!.text).toBe('a private question');
    expect(direct!.source).toMatchObject({ platform: 'irc', chatId: 'alice', chatType: 'direct', senderId: 'alice' });
    const refs = bot.messages().map((message) => message.messageRef);
    expect(new Set(refs).size).toBe(3);
    for (const message of bot.messages()) expect(message.source.messageId).toBe(message.messageRef);

    expect(await bot.adapter.send('It is noon.', target('#homing'))).toMatchObject({ ok: true });
    expect(await bot.adapter.send('Only for you.\nOn two lines.', target('alice'))).toMatchObject({ ok: true });
    await waitUntil('the replies', () => fromBot(alice).length === 3);
    expect(fromBot(alice).map((event) => [event.target, event.message])).toEqual([
      ['#homing', 'It is noon.'],
      ['alice', 'Only for you.'],
      ['alice', 'On two lines.'],
    ]);
  });

  it('retries a nick that is not online later, and fails a channel that does not exist for good', async () => {
    const bot = track(makeAdapter(server));
    await bot.adapter.connect();
    await waitUntil('connected', () => bot.adapter.state() === 'connected');
    expect(await bot.adapter.send('hello?', target('nobody'))).toMatchObject({
      ok: false,
      permanent: false,
      retryable: true,
      retryAfterMs: 60_000,
      notDelivered: true,
      error: expect.stringMatching(/^nobody is not online: 401/),
    });
    expect(await bot.adapter.send('hello?', target('#nowhere'))).toMatchObject({ ok: false, permanent: true, notDelivered: true });
    expect(await bot.adapter.send('still fine', target('#homing'))).toMatchObject({ ok: true });
  });

  it('delivers a 10 000-character reply complete and in order', async () => {
    const alice = track(await connectUser(server, 'alice'));
    const bot = track(makeAdapter(server));
    await bot.adapter.connect();
    await waitUntil('connected', () => bot.adapter.state() === 'connected');

    const words = ['alpha', 'beta', 'gamma', 'delta', 'épsilon', 'ζeta', 'ēta', 'θήτα', 'iota', 'kappa', '🙂'];
    let reply = '';
    for (let i = 0; reply.length < 10_000; i++) {
      reply += `${words[i % words.length]}${i}` + (i % 97 === 96 ? '\n\n' : i % 31 === 30 ? '.\n' : ' ');
    }
    reply = reply.slice(0, 10_000).trim();
    const chunks = splitMessage(reply, bot.adapter.limits);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(await bot.adapter.send(chunk, target('alice'))).toEqual({ ok: true, platformMessageId: expect.any(String) });

    const expected = chunks.flatMap((chunk) => toProtocolLines(chunk, textBudget('homing', 'alice')));
    await waitUntil('every line', () => fromBot(alice).length >= expected.length);
    const received = fromBot(alice).map((event) => event.message);
    expect(received).toEqual(expected);
    expect(received.join(' ').replace(/\s+/g, ' ')).toBe(reply.replace(/\s+/g, ' '));
  });

  it('takes another nick when its own is taken, and keeps working', async () => {
    const squatter = track(await connectUser(server, 'homing'));
    const alice = track(await connectUser(server, 'alice', ['#homing']));
    const bot = track(makeAdapter(server));
    await bot.adapter.connect();
    await waitUntil('connected', () => bot.adapter.state() === 'connected');
    const nick = bot.adapter.currentNick()!;
    expect(nick).not.toBe('homing');
    expect(nick).toMatch(/^homing(_+|\d+)$/);

    await waitUntil('the bot to join #homing', () => alice.joins.some((join) => join.nick === nick));
    alice.client.say('#homing', `${nick}: are you there?`);
    alice.client.say(nick, 'and in private?');
    await waitUntil('two inbound messages', () => bot.messages().length === 2);
    expect(bot.messages().map((message) => message.text)).toEqual(['are you there?', 'and in private?']);
    expect(squatter.privmsgs).toEqual([]);

    expect(await bot.adapter.send('Yes.', target('alice'))).toMatchObject({ ok: true });
    await waitUntil('the reply', () => fromBot(alice, nick).length === 1);
  });

  it('fails sends as retryable while the server is down and reconnects by itself when it is back', async () => {
    const bot = track(makeAdapter(server));
    await bot.adapter.connect();
    await waitUntil('connected', () => bot.adapter.state() === 'connected');

    await server.stop();
    await waitUntil('the adapter to notice', () => ['disconnected', 'connecting'].includes(bot.adapter.state()));
    expect(bot.states()).toContain('disconnected');
    expect(await bot.adapter.send('are you there?', target('alice'))).toMatchObject({ ok: false, retryable: true, permanent: false });

    await sleep(300); // a few failed attempts against a closed port
    await server.start();
    await waitUntil('a reconnect', () => bot.adapter.state() === 'connected');
    const alice = track(await connectUser(server, 'alice'));
    expect(await bot.adapter.send('back again', target('alice'))).toMatchObject({ ok: true });
    await waitUntil('the reply after the restart', () => fromBot(alice).length === 1);
    expect(fromBot(alice)[0]!.message).toBe('back again');
  });

  it('gives a sender who is not allowed no message event and exactly one refusal', async () => {
    const mallory = track(await connectUser(server, 'mallory', ['#homing']));
    const alice = track(await connectUser(server, 'alice'));
    const bot = track(makeAdapter(server));
    await bot.adapter.connect();
    await waitUntil('the bot to join #homing', () => mallory.joins.some((join) => join.nick === 'homing'));

    mallory.client.say('homing', 'let me in');
    await waitUntil('the refusal', () => mallory.notices.some((notice) => notice.nick === 'homing'));
    mallory.client.say('homing', 'please?');
    mallory.client.say('#homing', 'homing: pretty please?');
    alice.client.say('homing', 'it is me');
    await waitUntil("alice's message", () => bot.messages().length === 1);
    await sleep(200);

    expect(bot.messages().map((message) => message.source.senderId)).toEqual(['alice']);
    expect(mallory.notices.filter((notice) => notice.nick === 'homing')).toHaveLength(1);
    expect(bot.refused).toEqual(['mallory']);
    expect(alice.notices.filter((notice) => notice.nick === 'homing')).toHaveLength(0);
  });

  it('splits a long multi-byte line within the byte limit without breaking a character', async () => {
    const alice = track(await connectUser(server, 'alice'));
    const bot = track(makeAdapter(server));
    await bot.adapter.connect();
    await waitUntil('connected', () => bot.adapter.state() === 'connected');

    const unbroken = 'äöü€😀👩‍💻한국어'.repeat(60); // no spaces: cuts fall between characters
    const spaced = Array.from({ length: 150 }, (_, i) => `слово${i}`).join(' ');
    expect(await bot.adapter.send(`${unbroken}\n${spaced}`, target('alice'))).toMatchObject({ ok: true });
    await waitUntil('the lines', () => fromBot(alice).map((e) => e.message).join('').length >= unbroken.length + spaced.replace(/ /g, '').length);

    const relayed = alice.rawLines.filter((line) => line.startsWith(':homing!') && line.includes(' PRIVMSG alice :'));
    expect(relayed.length).toBeGreaterThan(4);
    for (const line of relayed) expect(Buffer.byteLength(line + '\r\n')).toBeLessThanOrEqual(IRC_LINE_BYTES);
    const texts = fromBot(alice).map((event) => event.message);
    for (const text of texts) expect(text).not.toContain('\uFFFD');
    const unbrokenLines = texts.filter((text) => !text.includes('слово'));
    expect(unbrokenLines.join('')).toBe(unbroken);
    expect(texts.filter((text) => text.includes('слово')).join(' ')).toBe(spaced);
  });

  it('reports a wrong server password as auth-failed and stops retrying', async () => {
    const locked = await startNgircd({ password: 'sesame' });
    cleanups.push(() => locked.dispose());
    const wrong = track(makeAdapter(locked, { password: 'guess' }));
    await wrong.adapter.connect();
    await waitUntil('auth-failed', () => wrong.adapter.state() === 'auth-failed');
    await sleep(300);
    expect(wrong.adapter.state()).toBe('auth-failed');
    expect(wrong.states().filter((state) => state === 'connecting')).toHaveLength(1);

    const right = track(makeAdapter(locked, { password: 'sesame' }));
    await right.adapter.connect();
    await waitUntil('connected', () => right.adapter.state() === 'connected');
  });

  it('probe() after a sleep drops a connection that no longer answers and reconnects', async () => {
    const bot = track(makeAdapter(server));
    await bot.adapter.connect();
    await waitUntil('connected', () => bot.adapter.state() === 'connected');
    await bot.adapter.probe();
    expect(bot.adapter.state()).toBe('connected');

    server.pause();
    try {
      await bot.adapter.probe();
      expect(['disconnected', 'connecting']).toContain(bot.adapter.state());
    } finally {
      server.resume();
    }
    await waitUntil('a reconnect', () => bot.adapter.state() === 'connected');
    const alice = track(await connectUser(server, 'alice'));
    expect(await bot.adapter.send('awake', target('alice'))).toMatchObject({ ok: true });
    await waitUntil('the reply', () => fromBot(alice).length === 1);
  });
});
