import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryPage, DeliveryRow, SessionPage } from '../src/shared/api';
import { connectApi, type ApiSocket } from './support/api-socket';
import { FakeTelegram, type FakeUser } from './support/fake-telegram';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { waitUntil } from './support/wait';

/**
 * The real headless gateway (`homing gateway`, built by `npm run build`, with
 * the adapter's real defaults: the CLI has no test tuning) on the fake Bot API.
 * One gateway for the whole file; each test uses chats of its own. The agent is
 * the chaos agent: "req-N" → "req-N line 1/1 ans", "req-N long K" → K lines of
 * up to 350 characters.
 */

const AGENT = fileURLToPath(new URL('./chaos/chaos-agent.mjs', import.meta.url));
const GROUP = -1001234567890;
const FORUM = -1009876543210;
const OLD_GROUP = -123456789;
const NEW_GROUP = -1001111111111;

describe('the headless gateway on Telegram (the fake Bot API)', () => {
  let fake: FakeTelegram;
  let dataDir: string;
  let gateway: RunningGateway;
  let api: ApiSocket;
  const people: FakeUser[] = [];
  const person = (id: number, name: string) => {
    const user = fake.addUser({ id, first_name: name });
    people.push(user);
    return user;
  };
  const mention = (text: string) => ({ text: `@homing_test_bot ${text}`, entities: [{ type: 'mention', offset: 0, length: 16 }] });
  const deliveries = async () => (await api.call<DeliveryPage>('listDeliveries', {})).deliveries;
  const rowFor = async (request: string): Promise<DeliveryRow | undefined> => (await deliveries()).find((row) => row.preview.startsWith(request));

  beforeAll(async () => {
    fake = new FakeTelegram();
    await fake.start();
    for (let i = 0; i < 8; i++) person(7000000001 + i, `Person ${i}`);
    fake.addChat({ id: GROUP, type: 'supergroup', title: 'Family' });
    fake.addChat({ id: FORUM, type: 'supergroup', title: 'Projects', is_forum: true });
    fake.addChat({ id: OLD_GROUP, type: 'group', title: 'Book club' });
    dataDir = mkdtempSync(join(tmpdir(), 'homing-tg-headless-'));
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({
        agent: { type: 'command', command: process.execPath, args: [AGENT, '--max-delay-ms', '0'] },
        platforms: {
          telegram: {
            apiRoot: fake.apiRoot,
            tokenEnv: 'TELEGRAM_TOKEN',
            allowFrom: people.map((user) => String(user.id)),
            groups: { [String(GROUP)]: {}, [String(FORUM)]: {}, [String(OLD_GROUP)]: { requireMention: false } },
            pollTimeoutSeconds: 5,
          },
        },
      }),
    );
    gateway = await startHeadlessGateway(['--data-dir', dataDir], { TELEGRAM_TOKEN: fake.token });
    api = await connectApi(gateway);
    await waitUntil('the bot polling', () => fake.polling, 15_000);
  });

  afterAll(async () => {
    api?.close();
    await gateway?.stop();
    await fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers a direct message, threaded to it', async () => {
    const asked = fake.userSays({ from: people[0]!, text: 'req-0001' });
    await waitUntil('the reply', () => fake.sentTo(people[0]!.id).length === 1, 15_000);
    expect(fake.sentTo(people[0]!.id)[0]).toMatchObject({ text: 'req-0001 line 1/1 ans', replyTo: asked.message_id });
    expect(gateway.output()).not.toContain(fake.token);
  });

  it('answers in a group only when addressed', async () => {
    fake.userSays({ from: people[1]!, chatId: GROUP, text: 'req-0002 chatter' });
    fake.userSays({ from: people[1]!, chatId: GROUP, ...mention('req-0003') });
    await waitUntil('the reply', () => fake.sentTo(GROUP).length === 1, 15_000);
    await waitUntil('all confirmed', () => fake.pendingUpdates().length === 0, 10_000);
    expect(fake.sentTo(GROUP).map((message) => message.text)).toEqual(['req-0003 line 1/1 ans']);
  });

  it('answers a forum topic in the topic, as a conversation of its own', async () => {
    const topic = fake.createTopic(FORUM, 'Garden', people[2]!);
    fake.userSays({ from: people[2]!, chatId: FORUM, threadId: topic, ...mention('req-0004') });
    fake.userSays({ from: people[2]!, chatId: FORUM, ...mention('req-0005') });
    await waitUntil('two replies', () => fake.sentTo(FORUM).length === 2, 15_000);
    const byText = new Map(fake.sentTo(FORUM).map((message) => [message.text, message.threadId]));
    expect(byText.get('req-0004 line 1/1 ans')).toBe(topic);
    expect(byText.get('req-0005 line 1/1 ans')).toBeUndefined();
    const sessions = (await api.call<SessionPage>('listSessions', {})).sessions.filter((session) => session.title === 'Projects');
    expect(sessions).toHaveLength(2);
  });

  it('sends a 10 000-character reply complete and in order, in chunks of at most 4 096 code points', async () => {
    fake.userSays({ from: people[3]!, text: 'req-0006 long 35' });
    await waitUntil('the reply delivered', async () => (await rowFor('req-0006'))?.state === 'delivered', 20_000);
    const sent = fake.sentTo(people[3]!.id);
    expect(sent.length).toBe((await rowFor('req-0006'))!.chunksTotal);
    expect(sent.length).toBeGreaterThanOrEqual(3);
    for (const message of sent) expect([...message.text].length).toBeLessThanOrEqual(4096);
    const lines = sent.flatMap((message) => message.text.split('\n'));
    expect(lines.map((line) => /^req-0006 line (\d+)\/35 /.exec(line)?.[1])).toEqual(Array.from({ length: 35 }, (_, i) => String(i + 1)));
    expect(lines.join('\n').length).toBeGreaterThan(10_000);
  });

  it('waits out a 429 and delivers without spending an attempt', async () => {
    fake.throttle(people[4]!.id, 3);
    const askedAt = Date.now();
    fake.userSays({ from: people[4]!, text: 'req-0007' });
    await waitUntil('the reply delivered', async () => (await rowFor('req-0007'))?.state === 'delivered', 20_000);
    expect(fake.sentTo(people[4]!.id)[0]!.at - askedAt).toBeGreaterThanOrEqual(2_500);
    expect((await rowFor('req-0007'))!.attempts).toBe(0);
  });

  it('fails a reply to a person who blocked the bot for good, saying so', async () => {
    fake.block(people[5]!.id);
    fake.userSays({ from: people[5]!, text: 'req-0008' });
    await waitUntil('the reply failed', async () => (await rowFor('req-0008'))?.state === 'failed', 20_000);
    const row = (await rowFor('req-0008'))!;
    expect(row.nextAttemptAt).toBeNull();
    expect(row.lastError).toMatch(/the person blocked the bot/);
  });

  it('follows a group upgraded to a supergroup with the same conversation', async () => {
    fake.userSays({ from: people[6]!, chatId: OLD_GROUP, text: 'req-0009' });
    await waitUntil('the first reply', () => fake.sentTo(OLD_GROUP).length === 1, 15_000);
    fake.migrate(OLD_GROUP, NEW_GROUP, people[6]!);
    fake.userSays({ from: people[6]!, chatId: NEW_GROUP, text: 'req-0010' });
    await waitUntil('the reply in the new chat', () => fake.sentTo(NEW_GROUP).length === 1, 15_000);
    expect(fake.sentTo(NEW_GROUP)[0]!.text).toBe('req-0010 line 1/1 ans');
    const sessions = (await api.call<SessionPage>('listSessions', {})).sessions.filter((session) => session.title === 'Book club');
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.userMessageCount).toBe(2);
  });

  it('shows typing while a slow agent works (renewed every 4 s), and stops with the reply', async () => {
    fake.userSays({ from: people[7]!, text: 'req-0011 slow' });
    await waitUntil('the reply', () => fake.sentTo(people[7]!.id).length === 1, 20_000);
    const typing = fake.actions.filter((action) => action.chatId === people[7]!.id && action.action === 'typing');
    const repliedAt = fake.sentTo(people[7]!.id)[0]!.at;
    expect(typing.length).toBeGreaterThanOrEqual(1);
    expect(typing.every((action) => action.at <= repliedAt)).toBe(true);
    // A 3.5–5 s turn: the first at once, the next after 4 s when the turn lasted that long.
    if (repliedAt - typing[0]!.at > 4_500) expect(typing.length).toBeGreaterThanOrEqual(2);
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    expect(fake.actions.filter((action) => action.chatId === people[7]!.id)).toHaveLength(typing.length);
  });
});

