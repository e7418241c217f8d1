import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiResults, MethodName } from '../src/shared/api';
import { RESEND_MARKER } from '../src/main/gateway/delivery/marker';
import { startGatewayHarness, type GatewayHarness } from './support/gateway-harness';
import { FakeSlack, type FakeSlackChannel, type FakeSlackUser } from './support/fake-slack';
import { waitUntil } from './support/wait';
import { longText } from './fixtures/long-text.mjs';

/**
 * The whole gateway in this process — pipeline, agent, ledger, sweeps — with
 * its Slack adapter (@slack/socket-mode and @slack/web-api, unchanged) on the
 * fake Slack: the Web API over real HTTP and Socket Mode over a real WebSocket.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));

describe('the gateway on Slack (Slack’s own libraries against the fake Slack)', () => {
  let fake: FakeSlack;
  let harness: GatewayHarness | undefined;
  let alice: FakeSlackUser;
  let bob: FakeSlackUser;
  let general: FakeSlackChannel;
  let always: FakeSlackChannel;

  beforeEach(async () => {
    fake = new FakeSlack({ ackTimeoutMs: 1_000, retryDelaysMs: [0, 1_000] });
    await fake.start();
    alice = fake.addUser('alice');
    bob = fake.addUser('bob');
    general = fake.addChannel('general');
    always = fake.addChannel('ask-the-bot');
  });

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    await fake.dispose();
  });

  async function startGateway(options: { agentArgs?: string[]; slack?: Record<string, unknown>; botToken?: string; connected?: boolean } = {}) {
    harness = await startGatewayHarness(
      {
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT, ...(options.agentArgs ?? [])] },
        platforms: {
          slack: {
            apiUrl: fake.apiUrl,
            appTokenEnv: 'SLACK_APP_TOKEN',
            botTokenEnv: 'SLACK_BOT_TOKEN',
            allowFrom: [alice.id],
            channels: { [general.id]: {}, [always.id]: { requireMention: false } },
            ...options.slack,
          },
        },
        delivery: { leaseSeconds: 2 },
      },
      { env: { SLACK_APP_TOKEN: fake.appToken, SLACK_BOT_TOKEN: options.botToken ?? fake.botToken }, tuning: { slack: { reconnectDelayMs: () => 200 } } },
    );
    if (options.connected !== false) {
      await harness.waitFor('platform.state', (event) => event.platform.name === 'slack' && event.platform.state === 'connected', 30_000);
    }
    return harness;
  }

  async function call<M extends MethodName>(method: M, params?: unknown): Promise<ApiResults[M]> {
    const result = await harness!.gateway.api.dispatch(method, params);
    if (!result.ok) throw new Error(`${method}: ${result.error.message}`);
    return result.value as ApiResults[M];
  }

  const botTexts = (channelId: string, threadTs?: string) =>
    fake
      .messages(channelId)
      .filter((m) => m.user === fake.bot.id && m.thread_ts === threadTs)
      .map((m) => m.text);
  const posts = () => fake.calls.filter((c) => c.method === 'chat.postMessage');

  it('answers a direct message in its DM, in mrkdwn, with nothing that could ping', async () => {
    await startGateway();
    const dm = fake.dmWith(alice);
    fake.userSays({ from: alice, channelId: dm.id, text: 'hello **there** <!channel> & @here' });
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    await harness!.waitFor('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'delivered', 20_000);
    expect(botTexts(dm.id)).toEqual(['You said: hello *there* &lt;!channel&gt; &amp; \uFF20here']);
    const session = (await call('listSessions')).sessions[0]!;
    expect(session).toMatchObject({ platform: 'slack', chatType: 'direct' });
  });

  it('in a channel answers when mentioned, every message in an always-answer channel, and never bots, strangers or unlisted channels', async () => {
    await startGateway();
    const elsewhere = fake.addChannel('random');
    fake.userSays({ from: alice, channelId: elsewhere.id, text: 'hi', mentionBot: true });
    fake.userSays({ from: bob, channelId: general.id, text: 'I am not allowed', mentionBot: true });
    fake.userSays({ from: alice, channelId: general.id, text: 'no mention' });
    fake.userSays({ from: alice, channelId: general.id, text: 'one', mentionBot: true });
    fake.userSays({ from: alice, channelId: always.id, text: 'no mention needed' });
    await waitUntil('two replies', () => botTexts(general.id).length === 1 && botTexts(always.id).length === 1, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(botTexts(general.id)).toEqual(['You said: one']);
    expect(botTexts(always.id)).toEqual(['You said: no mention needed']);
    expect(botTexts(elsewhere.id)).toEqual([]);
    // Its own replies come back as message events too, and are never taken.
    expect(harness!.events.filter((event) => event.type === 'turn.started')).toHaveLength(2);
  });

  it('treats a thread as a conversation of its own and answers inside it', async () => {
    await startGateway();
    const root = fake.userSays({ from: alice, channelId: general.id, text: 'in the channel', mentionBot: true });
    await waitUntil('the channel reply', () => botTexts(general.id).length === 1, 20_000);
    fake.userSays({ from: alice, channelId: general.id, text: 'in the thread', mentionBot: true, threadTs: root.ts });
    await waitUntil('the thread reply', () => botTexts(general.id, root.ts).length === 1, 20_000);
    expect(botTexts(general.id, root.ts)).toEqual(['You said: in the thread']);
    expect(botTexts(general.id)).toEqual(['You said: in the channel']);
    expect((await call('listSessions')).sessions).toHaveLength(2);
    await waitUntil('both replies marked delivered', async () => (await call('listDeliveries', {})).deliveries.every((row) => row.state === 'delivered'), 20_000);
    const threadRow = (await call('listDeliveries', {})).deliveries.find((row) => row.threadId === root.ts)!;
    expect(threadRow).toMatchObject({ chatId: general.id, threadId: root.ts, state: 'delivered' });
  });

  it('sends a 10 000-character reply complete and in order, each message within 4 000 characters', async () => {
    await startGateway({ agentArgs: ['--chars', '10000'] });
    const dm = fake.dmWith(alice);
    fake.userSays({ from: alice, channelId: dm.id, text: 'long please' });
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    await harness!.waitFor('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'delivered', 60_000);
    const texts = botTexts(dm.id);
    expect(texts.length).toBeGreaterThanOrEqual(3);
    expect(texts.every((text) => [...text].length <= 4000 && !text.startsWith(RESEND_MARKER))).toBe(true);
    const unescape = (text: string) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    expect(unescape(texts.join('')).replace(/[\s*_~]+/g, '')).toBe((longText(10000) as string).replace(/[\s*_~]+/g, ''));
  }, 90_000);

  it('waits out a 429 with its Retry-After without spending an attempt', async () => {
    await startGateway();
    const dm = fake.dmWith(alice);
    fake.rateLimitNext('chat.postMessage', 2);
    fake.userSays({ from: alice, channelId: dm.id, text: 'first' });
    const first = await harness!.waitFor('reply.recorded', undefined, 20_000);
    await harness!.waitFor('delivery.changed', (event) => event.delivery.id === first.obligationId && event.delivery.state === 'delivered', 20_000);
    expect(botTexts(dm.id)).toEqual(['You said: first']);
    const sends = posts();
    expect(sends.map((c) => c.status)).toEqual([429, 200]);
    expect(sends[1]!.at - sends[0]!.at).toBeGreaterThanOrEqual(1_900);
    expect(harness!.gateway.deliveries.ledger.getDelivery(first.obligationId)).toMatchObject({ state: 'delivered', attempts: 0 });
  }, 60_000);

  it('fails a reply for good, in plain words, where the bot is not in the channel or the channel is archived', async () => {
    await startGateway();
    fake.refuseSends(general.id, 'not_in_channel');
    fake.userSays({ from: alice, channelId: general.id, text: 'can you write here?', mentionBot: true });
    const recorded = await harness!.waitFor('reply.recorded', undefined, 20_000);
    const failed = await harness!.waitFor('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'failed', 20_000);
    expect(failed.delivery.lastError).toContain('the bot is not in this channel: invite it with /invite @your-app');
    const row = (await call('listDeliveries', {})).deliveries.find((entry) => entry.id === recorded.obligationId)!;
    expect(row).toMatchObject({ state: 'failed', attempts: 1, nextAttemptAt: null });

    fake.archive(always.id);
    fake.userSays({ from: alice, channelId: always.id, text: 'and here?' });
    const second = await harness!.waitForNext('reply.recorded', undefined, 20_000);
    const archived = await harness!.waitFor('delivery.changed', (event) => event.delivery.id === second.obligationId && event.delivery.state === 'failed', 20_000);
    expect(archived.delivery.lastError).toContain('the channel is archived');
  }, 60_000);

  it('answers an event Slack sent again (retry_attempt) once', async () => {
    await startGateway({ agentArgs: ['--delay-ms', '300'] });
    const dm = fake.dmWith(alice);
    // The acknowledgements go unseen by Slack: it sends the event again, twice.
    fake.loseAcks = true;
    const said = fake.userSays({ from: alice, channelId: dm.id, text: 'said once' });
    await waitUntil('two re-sends', () => fake.envelopes.filter((e) => e.ts === said.ts).length === 3, 20_000);
    fake.loseAcks = false;
    expect(fake.envelopes.filter((e) => e.ts === said.ts).map((e) => e.retryAttempt)).toEqual([0, 1, 2]);
    await waitUntil('the reply', () => botTexts(dm.id).length === 1, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(botTexts(dm.id)).toEqual(['You said: said once']);
    expect(harness!.events.filter((event) => event.type === 'turn.started')).toHaveLength(1);
  }, 60_000);

  it('reads what was written while Slack was away, after it comes back', async () => {
    await startGateway();
    const dm = fake.dmWith(alice);
    fake.userSays({ from: alice, channelId: dm.id, text: 'before' });
    await waitUntil('the first reply', () => botTexts(dm.id).length === 1, 20_000);
    const port = Number(new URL(fake.apiUrl).port);
    await fake.stop();
    fake.userSays({ from: alice, channelId: dm.id, text: 'while away 1' });
    fake.userSays({ from: alice, channelId: general.id, text: 'while away 2', mentionBot: true });
    fake.userSays({ from: alice, channelId: dm.id, text: 'while away 3' });
    await fake.start(port);
    await waitUntil('all answered', () => botTexts(dm.id).length === 3 && botTexts(general.id).length === 1, 40_000);
    expect(botTexts(dm.id)).toEqual(['You said: before', 'You said: while away 1', 'You said: while away 3']);
    expect(botTexts(general.id)).toEqual(['You said: while away 2']);
  }, 60_000);

  it('shows a refused bot token as a login failure, and stops trying', async () => {
    await startGateway({ botToken: 'xoxb-not-the-token', connected: false });
    const failed = await harness!.waitFor('platform.state', (event) => event.platform.name === 'slack' && event.platform.state === 'auth-failed', 30_000);
    expect(failed.platform.error).toContain('Slack refused the bot token');
    expect(fake.connectionsOpened).toBe(0);
  });

  it('sends a stranger in DMs a pairing code, and answers them once approved', async () => {
    await startGateway();
    const carol = fake.addUser('carol');
    const dm = fake.dmWith(carol);
    fake.userSays({ from: carol, channelId: dm.id, text: 'hi, who are you?' });
    fake.userSays({ from: carol, channelId: dm.id, text: 'hello??' });
    await waitUntil('the code sent', () => botTexts(dm.id).length === 1, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(botTexts(dm.id)).toHaveLength(1);
    const request = (await call('listPairing')).requests.find((entry) => entry.platform === 'slack')!;
    expect(botTexts(dm.id)[0]).toContain(request.code);
    expect(JSON.stringify(request)).not.toContain(carol.id);
    await call('decidePairing', { code: request.code, decision: 'approve' });
    await waitUntil('the approval notice', () => botTexts(dm.id).length === 2, 20_000);
    fake.userSays({ from: carol, channelId: dm.id, text: 'now?' });
    await waitUntil('the answer', () => botTexts(dm.id).length === 3, 20_000);
    expect(botTexts(dm.id)[2]).toBe('You said: now?');
  });
});
