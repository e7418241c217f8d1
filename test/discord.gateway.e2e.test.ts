import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiResults, MethodName } from '../src/shared/api';
import { RESEND_MARKER } from '../src/main/gateway/delivery/marker';
import { startGatewayHarness, type GatewayHarness } from './support/gateway-harness';
import { FakeDiscord, type FakeChannel, type FakeDiscordUser } from './support/fake-discord';
import { waitUntil } from './support/wait';
import { longText } from './fixtures/long-text.mjs';

/**
 * The whole gateway in this process — pipeline, agent, ledger, sweeps — with
 * its Discord adapter (discord.js 14, unchanged) on the fake Discord: REST over
 * real HTTP and the Gateway over a real WebSocket.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));

describe('the gateway on Discord (discord.js against the fake Discord)', () => {
  let fake: FakeDiscord;
  let harness: GatewayHarness | undefined;
  let alice: FakeDiscordUser;
  let bob: FakeDiscordUser;
  let guild: string;
  let general: FakeChannel;
  let always: FakeChannel;

  beforeEach(async () => {
    fake = new FakeDiscord({ heartbeatIntervalMs: 5_000 });
    await fake.start();
    alice = fake.addUser('alice');
    bob = fake.addUser('bob');
    guild = fake.addGuild('Family');
    general = fake.addChannel(guild, 'general');
    always = fake.addChannel(guild, 'ask-the-bot');
  });

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    await fake.stop();
  });

  async function startGateway(options: { agentArgs?: string[]; discord?: Record<string, unknown>; token?: string; connected?: boolean } = {}) {
    harness = await startGatewayHarness(
      {
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT, ...(options.agentArgs ?? [])] },
        platforms: {
          discord: {
            apiUrl: fake.apiUrl,
            tokenEnv: 'DISCORD_TOKEN',
            allowFrom: [alice.id],
            channels: { [general.id]: {}, [always.id]: { requireMention: false } },
            ...options.discord,
          },
        },
        delivery: { leaseSeconds: 2 },
      },
      { env: { DISCORD_TOKEN: options.token ?? fake.token }, tuning: { discord: { reconnectDelayMs: () => 200, typingIntervalMs: 300 } } },
    );
    if (options.connected !== false) {
      await harness.waitFor('platform.state', (event) => event.platform.name === 'discord' && event.platform.state === 'connected', 30_000);
    }
    return harness;
  }

  async function call<M extends MethodName>(method: M, params?: unknown): Promise<ApiResults[M]> {
    const result = await harness!.gateway.api.dispatch(method, params);
    if (!result.ok) throw new Error(`${method}: ${result.error.message}`);
    return result.value as ApiResults[M];
  }

  const botTexts = (channelId: string) => fake.messages(channelId).filter((m) => m.author.id === fake.bot.id).map((m) => m.content);
  const posts = (channelId: string) => fake.requests.filter((r) => r.method === 'POST' && r.path === `/api/v10/channels/${channelId}/messages`);

  it('answers a direct message in its DM channel, with the chunk key as an enforced nonce, showing typing meanwhile', async () => {
    await startGateway({ agentArgs: ['--delay-ms', '700'] });
    const dm = fake.dmChannel(alice);
    const asked = fake.userSays({ from: alice, channelId: dm.id, content: 'hello *there*' });
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    await harness!.waitFor('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'delivered', 20_000);

    expect(botTexts(dm.id)).toEqual(['You said: hello *there*']);
    const [post] = posts(dm.id).filter((r) => r.status === 200);
    const body = post!.body as Record<string, unknown>;
    expect(body.nonce).toMatch(/^[0-9a-f]{24}$/);
    expect(body.enforce_nonce).toBe(true);
    expect(body.allowed_mentions).toMatchObject({ parse: [] });
    expect(body.message_reference).toMatchObject({ message_id: asked.id });
    expect(fake.requests.some((r) => r.method === 'POST' && r.path === `/api/v10/channels/${dm.id}/typing` && r.status === 204)).toBe(true);
    expect(harness!.gateway.deliveries.ledger.getDelivery(recorded.obligationId)).toMatchObject({ platform: 'discord', chatId: dm.id, state: 'delivered', attempts: 0 });
    const session = (await call('listSessions')).sessions.find((entry) => entry.sessionId === recorded.sessionId)!;
    expect(session.title).toContain('alice');
  });

  it('in a server answers when mentioned or replied to, every message in an always-answer channel, and never bots, strangers or unlisted channels', async () => {
    await startGateway();
    const elsewhere = fake.addChannel(guild, 'random');
    const otherBot = fake.addUser('otherbot', { bot: true });
    fake.userSays({ from: alice, channelId: general.id, content: 'just chatting' });
    fake.userSays({ from: alice, channelId: elsewhere.id, content: 'hi', mentionBot: true });
    fake.userSays({ from: bob, channelId: general.id, content: 'I am not allowed', mentionBot: true });
    fake.userSays({ from: otherBot, channelId: always.id, content: 'beep', mentionBot: true });
    fake.userSays({ from: alice, channelId: general.id, content: 'one', mentionBot: true });
    await waitUntil('the first reply', () => botTexts(general.id).length === 1, 20_000);
    const first = fake.messages(general.id).find((m) => m.author.id === fake.bot.id)!;
    expect(first.content).toBe('You said: one');
    fake.userSays({ from: alice, channelId: general.id, content: 'two', replyTo: first.id });
    fake.userSays({ from: alice, channelId: always.id, content: 'no mention needed' });
    await waitUntil('three replies', () => botTexts(general.id).length === 2 && botTexts(always.id).length === 1, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(botTexts(general.id)).toEqual(['You said: one', 'You said: two']);
    expect(botTexts(always.id)).toEqual(['You said: no mention needed']);
    expect(botTexts(elsewhere.id)).toEqual([]);
    // Its own replies come back through the Gateway too, and are never taken.
    expect(harness!.events.filter((event) => event.type === 'turn.started')).toHaveLength(3);
  });

  it('treats a thread as a conversation of its own and answers inside it', async () => {
    await startGateway();
    const thread = fake.addThread(general.id, 'planning');
    fake.userSays({ from: alice, channelId: general.id, content: 'in the channel', mentionBot: true });
    await waitUntil('the channel reply', () => botTexts(general.id).length === 1, 20_000);
    fake.userSays({ from: alice, channelId: thread.id, content: 'in the thread', mentionBot: true });
    await waitUntil('the thread reply', () => botTexts(thread.id).length === 1, 20_000);
    expect(botTexts(thread.id)).toEqual(['You said: in the thread']);
    expect(botTexts(general.id)).toEqual(['You said: in the channel']);
    const sessions = (await call('listSessions')).sessions;
    expect(sessions).toHaveLength(2);
    await waitUntil('both replies marked delivered', async () => (await call('listDeliveries', {})).deliveries.every((row) => row.state === 'delivered'), 20_000);
    const threadRow = (await call('listDeliveries', {})).deliveries.find((row) => row.threadId === thread.id)!;
    expect(threadRow, JSON.stringify({ general: general.id, thread: thread.id, rows: (await call('listDeliveries', {})).deliveries.map((row) => [row.chatId, row.threadId, row.state, row.preview]) })).toMatchObject({ chatId: general.id, threadId: thread.id, state: 'delivered' });
  });

  it('sends a long reply complete and in order, each message within 2000 characters', async () => {
    await startGateway({ agentArgs: ['--chars', '9000'] });
    const dm = fake.dmChannel(alice);
    fake.userSays({ from: alice, channelId: dm.id, content: 'long please' });
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    await harness!.waitFor('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'delivered', 60_000);
    const texts = botTexts(dm.id);
    expect(texts.length).toBeGreaterThanOrEqual(5);
    expect(texts.every((text) => text.length <= 2000 && !text.startsWith(RESEND_MARKER))).toBe(true);
    expect(texts.join('').replace(/\s+/g, '')).toBe((longText(9000) as string).replace(/\s+/g, ''));
    const nonces = posts(dm.id).map((r) => (r.body as { nonce: string }).nonce);
    expect(new Set(nonces).size).toBe(texts.length);
  }, 90_000);

  it('after a Gateway drop resumes the session and answers every message sent meanwhile (replayed by Discord)', async () => {
    await startGateway();
    const dm = fake.dmChannel(alice);
    fake.userSays({ from: alice, channelId: dm.id, content: 'before' });
    await waitUntil('the first reply', () => botTexts(dm.id).length === 1, 20_000);
    fake.dropGateway();
    for (const text of ['while away 1', 'while away 2']) fake.userSays({ from: alice, channelId: dm.id, content: text });
    fake.userSays({ from: alice, channelId: general.id, content: 'while away 3', mentionBot: true });
    await waitUntil('resumed', () => fake.gatewayLog.some((entry) => entry.op === 'resume') && fake.connectedSessions === 1, 30_000);
    await waitUntil('all answered', () => botTexts(dm.id).length === 3 && botTexts(general.id).length === 1, 30_000);
    expect(botTexts(dm.id)).toEqual(['You said: before', 'You said: while away 1', 'You said: while away 2']);
    expect(botTexts(general.id)).toEqual(['You said: while away 3']);
    expect(fake.gatewayLog.filter((entry) => entry.op === 'identify')).toHaveLength(1);
  }, 60_000);

  it('when Discord forgets the session, identifies again and fetches what was missed since the last message taken', async () => {
    await startGateway();
    const dm = fake.dmChannel(alice);
    fake.userSays({ from: alice, channelId: dm.id, content: 'before' });
    fake.userSays({ from: alice, channelId: general.id, content: 'hello channel', mentionBot: true });
    await waitUntil('the first replies', () => botTexts(dm.id).length === 1 && botTexts(general.id).length === 1, 20_000);
    fake.forgetSessions();
    fake.userSays({ from: alice, channelId: dm.id, content: 'missed 1' });
    fake.userSays({ from: alice, channelId: general.id, content: 'missed 2', mentionBot: true });
    fake.userSays({ from: alice, channelId: dm.id, content: 'missed 3' });
    await waitUntil('identified again', () => fake.gatewayLog.filter((entry) => entry.op === 'identify').length === 2, 40_000);
    await waitUntil('all answered', () => botTexts(dm.id).length === 3 && botTexts(general.id).length === 2, 30_000);
    expect(botTexts(dm.id)).toEqual(['You said: before', 'You said: missed 1', 'You said: missed 3']);
    expect(botTexts(general.id)).toEqual(['You said: hello channel', 'You said: missed 2']);
    expect(fake.requests.some((r) => r.method === 'GET' && r.path.startsWith(`/api/v10/channels/${dm.id}/messages?`))).toBe(true);
  }, 60_000);

  it('waits out 429s (per route bucket and global) without spending an attempt', async () => {
    await startGateway();
    const dm = fake.dmChannel(alice);
    fake.rateLimitNext(`POST /channels/${dm.id}/messages`, 1.5);
    fake.userSays({ from: alice, channelId: dm.id, content: 'first' });
    const first = await harness!.waitFor('reply.recorded', undefined, 20_000);
    await harness!.waitFor('delivery.changed', (event) => event.delivery.id === first.obligationId && event.delivery.state === 'delivered', 20_000);
    fake.rateLimitNext('*', 1.2, true);
    fake.userSays({ from: alice, channelId: dm.id, content: 'second' });
    const second = await harness!.waitForNext('reply.recorded', undefined, 20_000);
    await harness!.waitFor('delivery.changed', (event) => event.delivery.id === second.obligationId && event.delivery.state === 'delivered', 20_000);

    expect(botTexts(dm.id)).toEqual(['You said: first', 'You said: second']);
    const sends = posts(dm.id);
    expect(sends.map((r) => r.status)).toEqual([429, 200, 200]);
    expect(sends[1]!.at - sends[0]!.at).toBeGreaterThanOrEqual(1_400);
    const globalLimited = fake.requests.find((r) => r.status === 429 && r !== sends[0]);
    expect(globalLimited).toBeDefined();
    expect(sends[2]!.at - globalLimited!.at).toBeGreaterThanOrEqual(1_100);
    for (const id of [first.obligationId, second.obligationId]) expect(harness!.gateway.deliveries.ledger.getDelivery(id)).toMatchObject({ state: 'delivered', attempts: 0 });
  }, 60_000);

  it('fails a reply for good, in plain words, where the bot lacks permissions or may not DM the person', async () => {
    await startGateway();
    fake.refuseSends(general.id, { status: 403, code: 50013, message: 'Missing Permissions' });
    fake.userSays({ from: alice, channelId: general.id, content: 'can you write here?', mentionBot: true });
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    const failed = await harness!.waitFor('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'failed', 20_000);
    expect(failed.delivery.lastError).toContain('the bot lacks a permission in this channel');
    expect(failed.delivery.lastError).toContain('50013');
    const row = (await call('listDeliveries', {})).deliveries.find((entry) => entry.id === recorded.obligationId)!;
    expect(row).toMatchObject({ state: 'failed', attempts: 1, nextAttemptAt: null });

    const dm = fake.dmChannel(alice);
    fake.refuseSends(dm.id, { status: 403, code: 50007, message: 'Cannot send messages to this user' });
    fake.userSays({ from: alice, channelId: dm.id, content: 'and here?' });
    const second = await harness!.waitForNext('reply.recorded', undefined, 20_000);
    const dmFailed = await harness!.waitFor('delivery.changed', (event) => event.delivery.id === second.obligationId && event.delivery.state === 'failed', 20_000);
    expect(dmFailed.delivery.lastError).toContain('Discord does not let the bot message this person');
    expect(botTexts(general.id)).toEqual([]);
  }, 60_000);

  it('never pings anyone from the agent’s text: @everyone, @here and mentions stay text', async () => {
    await startGateway();
    fake.userSays({ from: alice, channelId: always.id, content: `@everyone look, @here too, and <@${bob.id}>` });
    await waitUntil('the reply', () => botTexts(always.id).length === 1, 20_000);
    const reply = fake.messages(always.id).find((m) => m.author.id === fake.bot.id)!;
    expect(reply.pinged).toEqual({ everyone: false, users: [], roles: [] });
    expect(reply.content).not.toMatch(/@(everyone|here)/);
    expect(reply.content).toContain('everyone look');
  });

  it('shows a bad bot token as a login failure, and stops trying', async () => {
    await startGateway({ token: 'not-the-token', connected: false });
    const failed = await harness!.waitFor('platform.state', (event) => event.platform.name === 'discord' && event.platform.state === 'auth-failed', 30_000);
    expect(failed.platform.error).toContain('Discord refused the bot token');
    const status = (await call('listPlatforms')).find((platform) => platform.name === 'discord')!;
    expect(status).toMatchObject({ state: 'auth-failed' });
    expect(fake.gatewayLog).toEqual([]);
  });

  it('says which intent to switch on when Discord refuses the Message Content intent (close 4014)', async () => {
    fake.privilegedIntents = 0;
    await startGateway({ connected: false });
    const refused = await harness!.waitFor('platform.state', (event) => event.platform.name === 'discord' && !!event.platform.error?.includes('Message Content Intent'), 30_000);
    expect(refused.platform.state).toBe('disconnected');
  });

  it('sends a stranger in DMs a pairing code, and answers them once approved', async () => {
    await startGateway();
    const carol = fake.addUser('carol');
    const dm = fake.dmChannel(carol);
    fake.userSays({ from: carol, channelId: dm.id, content: 'hi, who are you?' });
    fake.userSays({ from: carol, channelId: dm.id, content: 'hello??' });
    await waitUntil('the code sent', () => botTexts(dm.id).length === 1, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(botTexts(dm.id)).toHaveLength(1);
    const request = (await call('listPairing')).requests.find((entry) => entry.platform === 'discord')!;
    expect(botTexts(dm.id)[0]).toContain(request.code);
    expect(JSON.stringify(request)).not.toContain(carol.id);
    await call('decidePairing', { code: request.code, decision: 'approve' });
    await waitUntil('the approval notice', () => botTexts(dm.id).length === 2, 20_000);
    fake.userSays({ from: carol, channelId: dm.id, content: 'now?' });
    await waitUntil('the answer', () => botTexts(dm.id).length === 3, 20_000);
    expect(botTexts(dm.id)[2]).toBe('You said: now?');
  });
});
