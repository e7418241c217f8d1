import { afterEach, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../src/main/gateway/platforms/adapter';
import { ircConfigSchema, type IrcConfigInput } from '../src/main/gateway/platforms/irc/config-schema';
import { IrcAdapter } from '../src/main/gateway/platforms/irc/irc-adapter';
import { startFakeIrcServer, type FakeIrcOptions, type FakeIrcServer } from './support/fake-irc-server';
import { FAST_IRC } from './support/ngircd';
import { waitUntil } from './support/wait';

/**
 * The allowlist by account. ngircd has no services and no IRCv3 account-tag, so
 * the account answers come from a fake server speaking the real IRCv3 wire
 * format: `@account=…` tags, extended-join, ACCOUNT (account-notify), WHOIS 330.
 */

let server: FakeIrcServer | undefined;
let adapter: IrcAdapter | undefined;
afterEach(async () => {
  await adapter?.disconnect();
  await server?.close();
  adapter = undefined;
  server = undefined;
});

async function start(fake: FakeIrcOptions, config: Partial<IrcConfigInput>) {
  server = await startFakeIrcServer(fake);
  const refused: string[] = [];
  const bot = new IrcAdapter({
    config: ircConfigSchema.parse({ host: server.host, port: server.port, tls: false, nick: 'homing', channels: ['#homing'], ...config }),
    ...FAST_IRC,
    onRefused: (nick) => refused.push(nick),
    whoisTimeoutMs: 1_000,
  });
  adapter = bot;
  const inbound: InboundMessage[] = [];
  bot.onEvent((event) => {
    if (event.type === 'message') inbound.push(event.message);
  });
  await bot.connect();
  const client = await server.registered();
  await waitUntil('the bot to join #homing', () => bot.canSend({ chatId: '#homing', threadId: null }));
  return { client, inbound, refused, texts: () => inbound.map((message) => message.text) };
}

describe('IRC allowlist by account', () => {
  it('with account-tag, lets in the allowed account under any nick and refuses the nick without it', async () => {
    const { client, inbound, refused, texts } = await start({ caps: ['account-tag'] }, { allow: [{ nick: 'ada', account: 'ada' }, { account: 'grace' }] });
    expect(client.enabledCaps.has('account-tag')).toBe(true);
    client.send('@account=ada :ada!a@h PRIVMSG homing :from ada, logged in');
    client.send(':ada!a@h PRIVMSG homing :from someone who took the nick ada');
    client.send('@account=mallory :ada!m@h PRIVMSG homing :from ada, wrong account');
    client.send('@account=grace :grace_away!g@h PRIVMSG homing :from grace under another nick');
    await client.roundTrip();
    await waitUntil('two messages', () => inbound.length === 2);
    expect(texts()).toEqual(['from ada, logged in', 'from grace under another nick']);
    await waitUntil('the refusal', () => refused.length === 1);
    expect(refused).toEqual(['ada']);
    // The tag was enough: nobody was looked up.
    expect(client.lines.filter((line) => line.startsWith('WHOIS'))).toEqual([]);
  });

  it('with requireAccount, a plain nick entry needs the same-named account', async () => {
    const { client, inbound, texts } = await start({ caps: ['account-tag'] }, { allow: ['ada'], requireAccount: true });
    client.send(':ada!a@h PRIVMSG homing :no account');
    client.send('@account=ada :ada!a@h PRIVMSG homing :with the account');
    await waitUntil('one message', () => inbound.length === 1);
    await client.roundTrip();
    expect(texts()).toEqual(['with the account']);
  });

  it('without account-tag, keeps accounts from extended-join and account-notify', async () => {
    const { client, inbound, texts } = await start({ caps: ['extended-join', 'account-notify'] }, { allow: [{ nick: 'ada', account: 'ada' }] });
    client.send(':ada!a@h JOIN #homing ada :Ada Lovelace');
    client.send(':ada!a@h PRIVMSG #homing :homing: joined logged in');
    await waitUntil('the first message', () => inbound.length === 1);
    client.send(':ada!a@h ACCOUNT *');
    client.send(':ada!a@h PRIVMSG #homing :homing: after logging out');
    client.send(':ada!a@h ACCOUNT ada');
    client.send(':ada!a@h PRIVMSG #homing :homing: logged in again');
    await waitUntil('the third message', () => inbound.length === 2);
    await client.roundTrip();
    expect(texts()).toEqual(['joined logged in', 'logged in again']);
    expect(client.lines.filter((line) => line.startsWith('WHOIS'))).toEqual([]);
  });

  it('without any account capability, asks WHOIS (330) and keeps a sender’s messages in order', async () => {
    const { client, inbound, refused, texts } = await start({ accounts: { ada: 'ada' } }, { allow: [{ nick: 'ada', account: 'ada' }, { nick: 'eve', account: 'eve' }] });
    client.send(':ada!a@h PRIVMSG homing :first');
    client.send(':ada!a@h PRIVMSG homing :second');
    client.send(':eve!e@h PRIVMSG homing :eve is not logged in');
    await waitUntil('two messages', () => inbound.length === 2);
    expect(texts()).toEqual(['first', 'second']);
    await waitUntil('eve refused', () => refused.includes('eve'));
    expect(client.lines.filter((line) => line.startsWith('WHOIS'))).toEqual(expect.arrayContaining(['WHOIS ada', 'WHOIS eve']));
  });
});
