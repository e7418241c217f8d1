import { writeFileSync } from 'node:fs';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { DeliveryPage } from '../../src/shared/api';
import { RESEND_MARKER } from '../../src/main/gateway/delivery/marker';
import { userTurns } from '../support/api-socket';
import { FakeDiscord, type FakeDiscordUser } from '../support/fake-discord';
import { waitUntil } from '../support/wait';
import type { CrashRow } from './suite';

/** Discord on the fake Discord (discord.js unchanged): its durable intake and nonce-deduplicated delivery. */
export const discordCrashes: CrashRow = {
  platform: 'Discord',
  cases(suite) {
    let fake: FakeDiscord;
    let alice: FakeDiscordUser;
    let bob: FakeDiscordUser;

    beforeEach(async () => {
      fake = new FakeDiscord({ heartbeatIntervalMs: 5_000 });
      await fake.start();
      alice = fake.addUser('alice');
      bob = fake.addUser('bob');
      suite.use({ discord: { apiUrl: fake.apiUrl, tokenEnv: 'DISCORD_TOKEN', allowFrom: [alice.id, bob.id] } }, { DISCORD_TOKEN: fake.token });
    });

    afterEach(() => fake.stop());

    const botTexts = (channelId: string) => fake.messages(channelId).filter((m) => m.author.id === fake.bot.id).map((m) => m.content);

    it('killed mid-chunk of a long reply: after restart every chunk is in the channel once, in order, none marked (the nonce deduplicates)', async () => {
      const paragraphs = Array.from({ length: 120 }, (_, i) => `Part ${i}: **bold ${i}** and some words to make it long enough to need chunks.`);
      const file = suite.replyFile(paragraphs);
      suite.configure(['--reply-file', file]);
      const first = await suite.start();
      await waitUntil('the bot connected', () => fake.connectedSessions === 1, 20_000);
      const dm = fake.dmChannel(alice);
      let sends = 0;
      // The second chunk reaches Discord; its answer never comes back.
      const stop = fake.fault((method, path) => (method === 'POST' && path === `/channels/${dm.id}/messages` && ++sends === 2 ? 'hang-after' : undefined));
      fake.userSays({ from: alice, channelId: dm.id, content: 'long please' });
      await waitUntil('the second chunk in the channel', () => botTexts(dm.id).length === 2, 45_000).catch((error: unknown) => {
        throw new Error(`${String(error)}; sent ${botTexts(dm.id).length}; requests ${JSON.stringify(fake.requests.slice(-10).map((r) => `${r.method} ${r.path} ${r.status}`))}\n${first.gateway.output().slice(-3000)}`);
      });
      await suite.crash(first.gateway);
      stop();

      const second = await suite.start();
      await suite.whenDelivered(second.api, 30_000);
      const row = (await second.api.call<DeliveryPage>('listDeliveries', {})).deliveries[0]!;
      const sent = botTexts(dm.id);
      expect(sent).toHaveLength(row.chunksTotal);
      expect(sent.some((text) => text.includes(RESEND_MARKER))).toBe(false);
      // The resend of chunk 2 carried the same nonce, and Discord returned the message already there.
      const chunkTwoPosts = fake.requests.filter((r) => r.method === 'POST' && r.path === `/api/v10/channels/${dm.id}/messages` && (r.body as { content: string }).content === sent[1]);
      expect(chunkTwoPosts.length).toBe(2);
      expect(new Set(chunkTwoPosts.map((r) => (r.body as { nonce: string }).nonce)).size).toBe(1);
      const shown = sent.join('\n\n');
      expect([...shown.matchAll(/Part (\d+): \*\*bold \1\*\* and/g)].map((match) => Number(match[1]))).toEqual(paragraphs.map((_, i) => i));
    }, 90_000);

    it('answers, after a restart, messages sent while it was down (in a DM it never saw too) and one saved but not yet answered, each once', async () => {
      const go = suite.file('go');
      suite.configure(['--wait-for', go]);
      const first = await suite.start();
      await waitUntil('the bot connected', () => fake.connectedSessions === 1, 20_000);
      const dm = fake.dmChannel(alice);
      fake.userSays({ from: alice, channelId: dm.id, content: 'saved, then killed' });
      await waitUntil('the message saved', async () => (await userTurns(first.api)).length === 1, 20_000);
      await suite.crash(first.gateway);
      fake.userSays({ from: alice, channelId: dm.id, content: 'while down 1' });
      fake.userSays({ from: alice, channelId: dm.id, content: 'while down 2' });
      // Bob's first message ever, in a DM channel Homing has never seen.
      const bobDm = fake.dmChannel(bob);
      fake.userSays({ from: bob, channelId: bobDm.id, content: 'first from bob' });

      writeFileSync(go, '');
      const second = await suite.start();
      await waitUntil('three replies', () => botTexts(dm.id).length === 3, 40_000).catch((error: unknown) => {
        throw new Error(`${String(error)}; sent ${JSON.stringify(botTexts(dm.id))}; requests ${JSON.stringify(fake.requests.slice(-8).map((r) => `${r.method} ${r.path} ${r.status}`))}\n${second.gateway.output().slice(-3000)}`);
      });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(botTexts(dm.id)).toEqual(['You said: saved, then killed', 'You said: while down 1', 'You said: while down 2']);
      // Bob's DM is found once he writes again (a DM channel cannot be listed): both his messages, in order.
      fake.userSays({ from: bob, channelId: bobDm.id, content: 'anyone?' });
      await waitUntil('bob answered', () => botTexts(bobDm.id).length === 2, 30_000);
      expect(botTexts(bobDm.id)).toEqual(['You said: first from bob', 'You said: anyone?']);
      expect((await userTurns(second.api)).sort()).toEqual(['anyone?', 'first from bob', 'saved, then killed', 'while down 1', 'while down 2']);
    }, 90_000);
  },
};
