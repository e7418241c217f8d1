import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { DeliveryPage } from '../../src/shared/api';
import { RESEND_MARKER } from '../../src/main/gateway/delivery/marker';
import { userTurns } from '../support/api-socket';
import { FakeTelegram, type FakeUser } from '../support/fake-telegram';
import { waitUntil } from '../support/wait';
import type { CrashRow } from './suite';

/** Telegram on the fake Bot API: its durable intake (an update confirmed only after it is saved) and chunked delivery. */
export const telegramCrashes: CrashRow = {
  platform: 'Telegram',
  cases(suite) {
    let fake: FakeTelegram;
    let alice: FakeUser;

    beforeEach(async () => {
      fake = new FakeTelegram();
      await fake.start();
      alice = fake.addUser({ id: 7000000001, first_name: 'Alice' });
      suite.use({ telegram: { apiRoot: fake.apiRoot, tokenEnv: 'TELEGRAM_TOKEN', allowFrom: [String(alice.id)], pollTimeoutSeconds: 2 } }, { TELEGRAM_TOKEN: fake.token });
    });

    afterEach(() => fake.stop());

    it('answers a message the bot had received but not saved when it died (the update comes again), once', async () => {
      suite.configure([]);
      const first = await suite.start();
      await waitUntil('the bot polling', () => fake.polling, 15_000);
      // The answer carrying the message stops one byte short: received, not readable yet.
      const stop = fake.fault((method) => (method === 'getUpdates' && fake.pendingUpdates().length > 0 ? { kind: 'trickle', ms: 60_000 } : undefined));
      fake.userSays({ from: alice, text: 'are you there?' });
      await waitUntil('the update handed', () => fake.handed.size === 1);
      await suite.crash(first.gateway);
      stop();
      expect(fake.pendingUpdates()).toHaveLength(1);

      const second = await suite.start();
      await waitUntil('the reply', () => fake.sentTo(alice.id).length === 1, 20_000);
      expect(fake.sentTo(alice.id)[0]!.text).toBe('You said: are you there?');
      await waitUntil('the update confirmed', () => fake.pendingUpdates().length === 0, 10_000);
      expect(await userTurns(second.api)).toEqual(['are you there?']);
    });

    it('after a kill between saving a message and confirming it, answers it once and never takes the update again', async () => {
      const go = suite.file('go');
      suite.configure(['--wait-for', go]);
      const first = await suite.start();
      await waitUntil('the bot polling', () => fake.polling, 15_000);
      // The poll that would confirm the update never gets through to Telegram.
      const stop = fake.fault((method, params) => (method === 'getUpdates' && Number(params.offset ?? 0) > 0 ? { kind: 'hang' } : undefined));
      fake.userSays({ from: alice, text: 'saved, then killed' });
      await waitUntil('the message saved', async () => (await userTurns(first.api)).length === 1, 15_000);
      await suite.crash(first.gateway);
      stop();
      expect(fake.pendingUpdates(), 'Telegram still holds it: not confirmed').toHaveLength(1);

      writeFileSync(go, '');
      const second = await suite.start();
      await waitUntil('the reply', () => fake.sentTo(alice.id).length === 1, 20_000);
      await waitUntil('the update confirmed', () => fake.pendingUpdates().length === 0, 10_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(fake.sentTo(alice.id).map((message) => message.text)).toEqual(['You said: saved, then killed']);
      expect(await userTurns(second.api)).toEqual(['saved, then killed']);
    });

    it('after a kill between saving a message and noting its update (the narrowest window), finds it in the transcript and does not take it twice', async () => {
      suite.configure([]);
      const first = await suite.start();
      await waitUntil('the bot polling', () => fake.polling, 15_000);
      const stop = fake.fault((method, params) => (method === 'getUpdates' && Number(params.offset ?? 0) > 0 ? { kind: 'hang' } : undefined));
      fake.userSays({ from: alice, text: 'once only' });
      await waitUntil(
        'the reply delivered',
        async () => (await first.api.call<DeliveryPage>('listDeliveries', { filter: 'delivered' })).deliveries.length === 1,
        15_000,
      );
      await suite.crash(first.gateway);
      stop();
      // As if the process had died after the transcript's fsync and before the note that the update is done.
      const stateFile = suite.file('telegram', `bot-${fake.bot.id}.json`);
      const state = JSON.parse(readFileSync(stateFile, 'utf8')) as { handled: number; inFlight: number | null };
      const updateId = fake.pendingUpdates()[0]!.update_id;
      expect(state.handled).toBe(updateId);
      writeFileSync(stateFile, JSON.stringify({ ...state, handled: updateId - 1, inFlight: updateId }));

      const second = await suite.start();
      await waitUntil('the update handed again and confirmed', () => fake.pendingUpdates().length === 0 && (fake.handed.get(updateId)?.length ?? 0) === 2, 15_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await userTurns(second.api)).toEqual(['once only']);
      expect(fake.sentTo(alice.id).map((message) => message.text)).toEqual(['You said: once only']);
    });

    it('resumes a reply killed mid-chunk after restart: earlier chunks not resent, the chunk in flight marked', async () => {
      const paragraphs = Array.from({ length: 120 }, (_, i) => `Part ${i}: **bold ${i}** and some words to make it long enough to need chunks.`);
      const file = suite.replyFile(paragraphs);
      suite.configure(['--reply-file', file]);
      const first = await suite.start();
      await waitUntil('the bot polling', () => fake.polling, 15_000);
      let sends = 0;
      const stop = fake.fault((method) => (method === 'sendMessage' && ++sends === 2 ? { kind: 'hang-after' } : undefined));
      fake.userSays({ from: alice, text: 'long please' });
      await waitUntil('the second chunk on its way', () => fake.sentTo(alice.id).length === 2, 20_000);
      await suite.crash(first.gateway);
      stop();

      const second = await suite.start();
      await suite.whenDelivered(second.api, 20_000);
      const sent = fake.sentTo(alice.id);
      const row = (await second.api.call<DeliveryPage>('listDeliveries', {})).deliveries[0]!;
      expect(sent).toHaveLength(row.chunksTotal + 1);
      expect(sent[0]!.text.startsWith(RESEND_MARKER)).toBe(false);
      expect(sent[2]!.text).toBe(`${RESEND_MARKER}\n${sent[1]!.text}`);
      expect(sent.slice(3).every((message) => !message.text.startsWith(RESEND_MARKER))).toBe(true);
      const shown = [sent[0]!, ...sent.slice(2)].map((message) => message.text.replace(`${RESEND_MARKER}\n`, '')).join('\n\n');
      expect([...shown.matchAll(/Part (\d+): bold \1 and/g)].map((match) => Number(match[1]))).toEqual(paragraphs.map((_, i) => i));
      expect(existsSync(suite.file('homing.db'))).toBe(true);
    });
  },
};
