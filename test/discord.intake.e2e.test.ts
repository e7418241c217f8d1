import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeDiscord, type FakeChannel, type FakeDiscordUser } from './support/fake-discord';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { waitUntil } from './support/wait';

/**
 * Discord's intake through the real headless gateway (`homing gateway`, built
 * by `npm run build`) on the fake Discord, across a SIGKILL and a restart on
 * the same data directory: a catch-up reads every page of a busy channel to
 * its end, reads every channel the bot answers in (not only the busiest), and
 * reads a channel again after a failed read, with live messages waiting for it.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));

describe('Discord intake after the gateway was down', () => {
  let fake: FakeDiscord;
  let alice: FakeDiscordUser;
  let chatter: FakeDiscordUser;
  let home: FakeChannel;
  let dataDir: string;
  const gateways: RunningGateway[] = [];

  beforeEach(async () => {
    fake = new FakeDiscord({ heartbeatIntervalMs: 5_000 });
    await fake.start();
    alice = fake.addUser('alice');
    chatter = fake.addUser('chatter');
    home = fake.addChannel(fake.addGuild('Home'), 'homing');
    dataDir = mkdtempSync(join(tmpdir(), 'homing-dc-intake-'));
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT] },
        // `home` answers mentions from everyone; a server not listed here is ignored.
        platforms: { discord: { apiUrl: fake.apiUrl, tokenEnv: 'DISCORD_TOKEN', allowFrom: [alice.id], channels: { [home.id]: { allowFrom: ['*'] } } } },
        delivery: { leaseSeconds: 2 },
      }),
    );
  });

  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.kill();
    await fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(): Promise<RunningGateway> {
    const gateway = await startHeadlessGateway(['--data-dir', dataDir], { DISCORD_TOKEN: fake.token });
    gateways.push(gateway);
    await waitUntil('the bot connected', () => fake.connectedSessions === 1, 20_000);
    return gateway;
  }

  async function crash(gateway: RunningGateway): Promise<void> {
    await gateway.kill();
    gateways.splice(gateways.indexOf(gateway), 1);
    await waitUntil('the bot gone', () => fake.connectedSessions === 0, 10_000);
  }

  const botTexts = (channelId: string) => fake.messages(channelId).filter((m) => m.author.id === fake.bot.id).map((m) => m.content);

  async function answered(channelId: string, text: string, gateway: RunningGateway, timeoutMs = 30_000): Promise<void> {
    await waitUntil(`"${text}" answered`, () => botTexts(channelId).includes(`You said: ${text}`), timeoutMs).catch((error: unknown) => {
      const reads = fake.requests.filter((r) => r.method === 'GET').length;
      throw new Error(`${String(error)}; the bot said ${JSON.stringify(botTexts(channelId).slice(-5))}; ${reads} GETs\n${gateway.output().slice(-2000)}`);
    });
  }

  it('answers a mention sent after 500 other messages while it was down: the catch-up reads the channel to its end before a live message moves it', async () => {
    const first = await start();
    fake.userSays({ from: alice, channelId: home.id, content: 'hello', mentionBot: true });
    await answered(home.id, 'hello', first);
    await crash(first);

    for (let i = 0; i < 600; i++) {
      if (i === 550) fake.userSays({ from: alice, channelId: home.id, content: 'the mention after 550', mentionBot: true });
      else fake.userSays({ from: chatter, channelId: home.id, content: `chatter ${i}` });
    }
    const second = await start();
    fake.userSays({ from: alice, channelId: home.id, content: 'live, after the restart', mentionBot: true });
    await answered(home.id, 'live, after the restart', second);
    await answered(home.id, 'the mention after 550', second, 5_000);
    expect(botTexts(home.id)).toEqual(['You said: hello', 'You said: the mention after 550', 'You said: live, after the restart']);
    // Every one of the 600 reached the bot.
    expect(fake.messages(home.id).filter((m) => m.author.id !== fake.bot.id).every((m) => fake.handed.has(m.id))).toBe(true);
  }, 60_000);

  it('answers a DM sent while it was down though 150 channels of a server it ignores were busier: only channels it answers in are caught up, all of them', async () => {
    const busyGuild = fake.addGuild('Busy');
    const busy = Array.from({ length: 150 }, (_, i) => fake.addChannel(busyGuild, `busy-${i}`));
    const dm = fake.dmChannel(alice);
    const first = await start();
    fake.userSays({ from: alice, channelId: dm.id, content: 'hello by DM' });
    await answered(dm.id, 'hello by DM', first);
    for (const channel of busy) fake.userSays({ from: chatter, channelId: channel.id, content: `busy in ${channel.name}` });
    // Taken in the order dispatched: once this is answered, the busy channels' messages were taken too.
    fake.userSays({ from: alice, channelId: home.id, content: 'after the busy ones', mentionBot: true });
    await answered(home.id, 'after the busy ones', first);
    await crash(first);

    fake.userSays({ from: alice, channelId: dm.id, content: 'DM while down' });
    const second = await start();
    await answered(dm.id, 'DM while down', second);
    expect(botTexts(dm.id)).toEqual(['You said: hello by DM', 'You said: DM while down']);
    // No channel of the ignored server was read (nor given a position to read).
    const busyIds = new Set(busy.map((channel) => channel.id));
    expect(fake.requests.filter((r) => r.method === 'GET' && busyIds.has(/\/channels\/(\d+)\//.exec(r.path)?.[1] ?? ''))).toEqual([]);
  }, 60_000);

  it('reads a channel again after its catch-up read failed (a 502 through discord.js retries), and a live message there waits for it', async () => {
    const dm = fake.dmChannel(alice);
    const first = await start();
    fake.userSays({ from: alice, channelId: dm.id, content: 'hello by DM' });
    await answered(dm.id, 'hello by DM', first);
    await crash(first);

    fake.userSays({ from: alice, channelId: dm.id, content: 'DM while down' });
    // One read as the bot sees it: discord.js tries a 5xx four times.
    fake.failHistoryReads(4);
    const failedReads = () => fake.requests.filter((r) => r.status === 502).length;
    const second = await start();
    await waitUntil('the catch-up read failed', () => failedReads() === 4, 20_000);
    fake.userSays({ from: alice, channelId: dm.id, content: 'live, after the failed read' });
    await answered(dm.id, 'live, after the failed read', second);
    await answered(dm.id, 'DM while down', second, 5_000);
    expect(botTexts(dm.id)).toEqual(['You said: hello by DM', 'You said: DM while down', 'You said: live, after the failed read']);
  }, 60_000);
});
