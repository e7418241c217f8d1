import { writeFileSync } from 'node:fs';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { DeliveryPage } from '../../src/shared/api';
import { RESEND_MARKER } from '../../src/main/gateway/delivery/marker';
import { userTurns } from '../support/api-socket';
import { FakeSlack, type FakeSlackUser } from '../support/fake-slack';
import { waitUntil } from '../support/wait';
import type { CrashRow } from './suite';

/** Slack on the fake Slack (Slack's own libraries unchanged): its durable intake, and the marker where a part may have arrived. */
export const slackCrashes: CrashRow = {
  platform: 'Slack',
  cases(suite) {
    let fake: FakeSlack;
    let alice: FakeSlackUser;
    let bob: FakeSlackUser;

    beforeEach(async () => {
      fake = new FakeSlack();
      await fake.start();
      alice = fake.addUser('alice');
      bob = fake.addUser('bob');
      suite.use(
        { slack: { apiUrl: fake.apiUrl, appTokenEnv: 'SLACK_APP_TOKEN', botTokenEnv: 'SLACK_BOT_TOKEN', allowFrom: [alice.id, bob.id] } },
        { SLACK_APP_TOKEN: fake.appToken, SLACK_BOT_TOKEN: fake.botToken },
      );
    });

    afterEach(() => fake.dispose());

    const unescape = (text: string) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    const botTexts = (channelId: string) => fake.messages(channelId).filter((m) => m.user === fake.bot.id).map((m) => unescape(m.text));

    it('killed mid-chunk of a long reply: after restart the reply is complete and in order, the marker only on the part that may have arrived', async () => {
      const paragraphs = Array.from({ length: 160 }, (_, i) => `Part ${i}: **bold ${i}** and some words to make it long enough to need chunks.`);
      const file = suite.replyFile(paragraphs);
      suite.configure(['--reply-file', file]);
      const first = await suite.start();
      await waitUntil('the bot connected', () => fake.connectedSockets === 1, 20_000);
      const dm = fake.dmWith(alice);
      let sends = 0;
      // The second chunk reaches Slack; its answer never comes back (chat.postMessage has no idempotency key).
      const stop = fake.fault((method, body) => (method === 'chat.postMessage' && body.channel === dm.id && ++sends === 2 ? 'hang-after' : undefined));
      fake.userSays({ from: alice, channelId: dm.id, text: 'long please' });
      await waitUntil('the second chunk in the DM', () => botTexts(dm.id).length === 2, 45_000).catch((error: unknown) => {
        throw new Error(`${String(error)}; sent ${botTexts(dm.id).length}\n${first.gateway.output().slice(-3000)}`);
      });
      await suite.crash(first.gateway);
      stop();

      const second = await suite.start();
      await suite.whenDelivered(second.api, 30_000);
      const row = (await second.api.call<DeliveryPage>('listDeliveries', {})).deliveries[0]!;
      const sent = botTexts(dm.id);
      // Chunk 2 twice (its first copy arrived unconfirmed), the second copy marked; no other marker.
      expect(sent).toHaveLength(row.chunksTotal + 1);
      expect(sent.map((text, i) => [i, text.startsWith(RESEND_MARKER)]).filter(([, marked]) => marked).map(([i]) => i)).toEqual([2]);
      expect(sent[2]!.replace(`${RESEND_MARKER}\n`, '')).toBe(sent[1]);
      const shown = [sent[0], ...sent.slice(2).map((text) => text.replace(`${RESEND_MARKER}\n`, ''))].join('\n\n');
      expect([...shown.matchAll(/Part (\d+): \*bold \1\* and/g)].map((match) => Number(match[1]))).toEqual(paragraphs.map((_, i) => i));
    }, 90_000);

    it('answers, after a restart, messages sent while it was down (in a DM it never saw too) and one saved but not yet answered, each once', async () => {
      const go = suite.file('go');
      suite.configure(['--wait-for', go]);
      const first = await suite.start();
      await waitUntil('the bot connected', () => fake.connectedSockets === 1, 20_000);
      const dm = fake.dmWith(alice);
      fake.userSays({ from: alice, channelId: dm.id, text: 'saved, then killed' });
      await waitUntil('the message saved', async () => (await userTurns(first.api)).length === 1, 20_000);
      await suite.crash(first.gateway);
      fake.userSays({ from: alice, channelId: dm.id, text: 'while down 1' });
      fake.userSays({ from: alice, channelId: dm.id, text: 'while down 2' });
      // Bob's first message ever, in a DM Homing has never seen: found by listing the bot's DMs.
      const bobDm = fake.dmWith(bob);
      fake.userSays({ from: bob, channelId: bobDm.id, text: 'first from bob' });

      writeFileSync(go, '');
      const second = await suite.start();
      await waitUntil('three replies', () => botTexts(dm.id).length === 3, 40_000).catch((error: unknown) => {
        throw new Error(`${String(error)}; sent ${JSON.stringify(botTexts(dm.id))}\n${second.gateway.output().slice(-3000)}`);
      });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(botTexts(dm.id)).toEqual(['You said: saved, then killed', 'You said: while down 1', 'You said: while down 2']);
      await waitUntil('bob answered', () => botTexts(bobDm.id).length === 1, 30_000);
      expect(botTexts(bobDm.id)).toEqual(['You said: first from bob']);
      expect((await userTurns(second.api)).sort()).toEqual(['first from bob', 'saved, then killed', 'while down 1', 'while down 2']);
    }, 90_000);
  },
};
