import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlatformStatus } from '../src/shared/api';
import { connectApi, userTurns, type ApiSocket } from './support/api-socket';
import { FakeTelegram, type FakeUser } from './support/fake-telegram';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { waitUntil } from './support/wait';

/**
 * The edges of Telegram's intake contract, through the real headless gateway
 * (`homing gateway`, built by `npm run build`) on the fake Bot API, which
 * behaves there as telegram-bot-api does: update ids numbered anew after a
 * quiet week, updates kept 24 hours, getUpdates refused while a webhook is set.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));
const HOUR_MS = 3600_000;

describe('the headless gateway at the edges of what Telegram keeps', () => {
  let fake: FakeTelegram;
  const fakes: FakeTelegram[] = [];
  let alice: FakeUser;
  let dataDir: string;
  const gateways: RunningGateway[] = [];
  const sockets: ApiSocket[] = [];

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-tg-intake-'));
  });

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    for (const gateway of gateways.splice(0)) await gateway.kill();
    for (const server of fakes.splice(0)) await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function startFake(options: ConstructorParameters<typeof FakeTelegram>[0] = {}): Promise<void> {
    fake = new FakeTelegram(options);
    fakes.push(fake);
    await fake.start();
    alice = fake.addUser({ id: 7000000001, first_name: 'Alice' });
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT] },
        platforms: { telegram: { apiRoot: fake.apiRoot, tokenEnv: 'TELEGRAM_TOKEN', allowFrom: [String(alice.id)], pollTimeoutSeconds: 2 } },
      }),
    );
  }

  async function start(): Promise<{ gateway: RunningGateway; api: ApiSocket }> {
    const gateway = await startHeadlessGateway(['--data-dir', dataDir], { TELEGRAM_TOKEN: fake.token });
    gateways.push(gateway);
    const api = await connectApi(gateway);
    sockets.push(api);
    return { gateway, api };
  }

  async function stop(gateway: RunningGateway): Promise<void> {
    await gateway.stop();
    gateways.splice(gateways.indexOf(gateway), 1);
  }

  const replies = () => fake.sentTo(alice.id).map((message) => message.text);

  async function telegramCard(api: ApiSocket): Promise<PlatformStatus | undefined> {
    return (await api.call<PlatformStatus[]>('listPlatforms')).find((platform) => platform.name === 'telegram');
  }


  /** Resolves once the gateway polled `count` more times than now (so it has read the answer of the first). */
  async function polledAgain(count = 2): Promise<void> {
    const polls = () => fake.requests.filter((request) => request.method === 'getUpdates').length;
    const target = polls() + count;
    await waitUntil(`${count} more polls`, () => polls() >= target, 15_000);
  }

  it('after a quiet week Telegram numbers its updates anew, far below: the bot answers each new one once, before and after a restart', async () => {
    await startFake({ firstUpdateId: 700_000_000, randomUpdateId: () => 3_000_000 });
    const first = await start();
    await waitUntil('the bot polling', () => fake.polling, 15_000);
    fake.userSays({ from: alice, text: 'before the quiet week' });
    await waitUntil('the first answer', () => replies().length === 1, 15_000);
    await waitUntil('the update confirmed', () => fake.confirmedBelow === 700_000_001, 10_000);

    fake.advanceClock(8 * 24 * HOUR_MS);
    fake.userSays({ from: alice, text: 'after the quiet week' });
    expect(fake.pendingUpdates().map((update) => update.update_id)).toEqual([3_000_000]);
    await waitUntil('the answer after the quiet week', () => replies().length === 2, 10_000);
    fake.userSays({ from: alice, text: 'and the next one' });
    await waitUntil('the next answer', () => replies().length === 3, 10_000);
    const lastOffset = () => Number(fake.requests.filter((request) => request.method === 'getUpdates').at(-1)?.params.offset);
    await waitUntil('the new numbers confirmed', () => lastOffset() === 3_000_002 && fake.pendingUpdates().length === 0, 10_000);

    await stop(first.gateway);
    const second = await start();
    fake.userSays({ from: alice, text: 'after a restart' });
    await waitUntil('the answer after the restart', () => replies().length === 4, 15_000);
    await polledAgain();
    expect(replies()).toEqual(['You said: before the quiet week', 'You said: after the quiet week', 'You said: and the next one', 'You said: after a restart']);
    expect(await userTurns(second.api)).toEqual(['before the quiet week', 'after the quiet week', 'and the next one', 'after a restart']);
  });

  it('moved to another Bot API server (apiRoot) with numbers of its own, answers what that server holds once: not a message already answered through the first', async () => {
    await startFake({ firstUpdateId: 300_000_000 });
    const first = await start();
    await waitUntil('the bot polling', () => fake.polling, 15_000);
    fake.userSays({ from: alice, text: 'seen by both servers' });
    await waitUntil('the answer', () => replies().length === 1, 15_000);
    await polledAgain();
    await stop(first.gateway);

    // A local telegram-bot-api that ran alongside Telegram's (the bot never logged out there) got the
    // same message, under an update id of its own far above the first server's.
    await startFake({ firstUpdateId: 800_000_000 });
    const again = fake.userSays({ from: alice, text: 'seen by both servers' });
    expect(again.message_id).toBe(1);
    fake.userSays({ from: alice, text: 'new on the local server' });
    const second = await start();
    await waitUntil('the answer to the new message', () => replies().length === 1, 15_000);
    await polledAgain();
    expect(replies()).toEqual(['You said: new on the local server']);
    expect(await userTurns(second.api)).toEqual(['seen by both servers', 'new on the local server']);
  });

  it('after more than 24 hours away, answers what Telegram still keeps and says once, on the card and in the log, that older messages may be lost', async () => {
    await startFake();
    const first = await start();
    await waitUntil('the bot polling', () => fake.polling, 15_000);
    fake.userSays({ from: alice, text: 'hello' });
    await waitUntil('the first answer', () => replies().length === 1, 15_000);
    await polledAgain();
    await stop(first.gateway);

    // Homing is away 25 hours: on Telegram's clock, and in what the gateway last saved.
    fake.userSays({ from: alice, text: 'sent while Homing was away' });
    fake.advanceClock(25 * HOUR_MS);
    fake.userSays({ from: alice, text: 'sent just now' });
    const stateFile = join(dataDir, 'telegram', `bot-${fake.bot.id}.json`);
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as Record<string, unknown>;
    writeFileSync(stateFile, JSON.stringify({ ...state, lastPolledAt: Date.now() - 25 * HOUR_MS }));

    const second = await start();
    await waitUntil('the answer to what Telegram kept', () => replies().length === 2, 15_000);
    expect(replies()).toEqual(['You said: hello', 'You said: sent just now']);
    await waitUntil('the notice on the card', async () => (await telegramCard(second.api))?.notice !== undefined, 5_000);
    const notice = (await telegramCard(second.api))!.notice!.text;
    expect(notice).toMatch(/^Homing was away longer than Telegram keeps messages \(24 hours\): messages sent to it before that may be lost\. Homing last reached Telegram at \d{4}-/);
    await polledAgain();
    expect(second.gateway.output().split('longer than Telegram keeps messages').length - 1, 'told once, not on every poll').toBe(1);

    // Told once: a restart does not say it again.
    await stop(second.gateway);
    const third = await start();
    await waitUntil('the bot polling', () => fake.polling, 15_000);
    await polledAgain();
    expect((await telegramCard(third.api))?.notice).toBeUndefined();
    expect(third.gateway.output()).not.toContain('longer than Telegram keeps messages');
  });

  it("removes a webhook another program left on the bot (keeping what waits), says so, and does not fight one that comes back", async () => {
    await startFake();
    fake.setWebhook('https://old-framework.example/hook/secret-path');
    fake.userSays({ from: alice, text: 'written while the webhook was set' });
    const { gateway, api } = await start();
    await waitUntil('the answer', () => replies().length === 1, 15_000);
    expect(replies()).toEqual(['You said: written while the webhook was set']);
    expect(fake.webhook).toBe('');
    const removals = fake.requests.filter((request) => request.method === 'deleteWebhook');
    expect(removals).toHaveLength(1);
    expect(removals[0]!.params.drop_pending_updates).toBeUndefined();
    await waitUntil('the notice on the card', async () => (await telegramCard(api))?.notice !== undefined, 5_000);
    const notice = (await telegramCard(api))!.notice!.text;
    expect(notice).toMatch(/^A webhook was set for this bot \(to old-framework\.example\).*Homing removed the webhook \(the 1 messages waiting are kept and answered now\)/);
    expect(notice).not.toContain('secret-path');
    expect(gateway.output()).toContain('A webhook was set for this bot');

    // The program that set it is still running and sets it again: Homing leaves it and says why.
    fake.setWebhook('https://old-framework.example/hook/secret-path');
    await waitUntil('the card saying so', async () => /keeps setting one/.test((await telegramCard(api))?.error ?? ''), 10_000);
    const card = (await telegramCard(api))!;
    expect(card.state).toBe('degraded');
    expect(card.error).toMatch(/Stop that program or give it a bot of its own/);
    expect(card.error).not.toMatch(/another program is reading this bot's messages/);
    expect(fake.webhook).not.toBe('');
    expect(fake.requests.filter((request) => request.method === 'deleteWebhook')).toHaveLength(1);

    // Once it is gone, messages flow again.
    fake.setWebhook('');
    fake.userSays({ from: alice, text: 'after the other program stopped' });
    await waitUntil('the answer after', () => replies().length === 2, 20_000);
  });
});
