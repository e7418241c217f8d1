import { existsSync, unlinkSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { DeliveryPage } from '../../src/shared/api';
import { RESEND_MARKER } from '../../src/main/gateway/delivery/marker';
import { userTurns } from '../support/api-socket';
import { FakeSignalCli, type FakeSignalPerson } from '../support/fake-signal-cli';
import { waitUntil } from '../support/wait';
import type { CrashRow } from './suite';

/** Signal on the fake signal-cli daemon: the inbox journal at intake, and marked resends (`send` has no idempotency key). */
export const signalCrashes: CrashRow = {
  platform: 'Signal',
  cases(suite) {
    let fake: FakeSignalCli;
    let alice: FakeSignalPerson;

    beforeEach(async () => {
      fake = await new FakeSignalCli().start();
      alice = fake.addPerson('alice');
      suite.use({ signal: { daemon: fake.address, account: fake.account.number, allowFrom: [alice.number] } });
    });

    afterEach(() => fake.stop());

    const texts = () => fake.sentTo(alice).map((sent) => sent.message);

    it('killed mid-chunk of a long reply: after restart every part arrives in order, the marker only on the part in flight', async () => {
      const paragraphs = Array.from({ length: 120 }, (_, i) => `Part ${i}: **bold ${i}** and some words to make it long enough to need parts.`);
      const file = suite.replyFile(paragraphs);
      suite.configure(['--reply-file', file]);
      const first = await suite.start();
      await waitUntil('the gateway subscribed', () => fake.subscribers === 1, 20_000);
      // The second part reaches Signal (alice sees it); its answer never comes back.
      let sends = 0;
      const release = (() => {
        let free: (() => void) | undefined;
        fake.onSend(() => {
          if (++sends === 1) free = fake.hangNextSend();
        });
        return () => free?.();
      })();
      fake.userSays({ from: alice, text: 'long please' });
      await waitUntil('the second part sent', () => texts().length === 2, 45_000).catch((error: unknown) => {
        throw new Error(`${String(error)}; sent ${texts().length}\n${first.gateway.output().slice(-3000)}`);
      });
      await suite.crash(first.gateway);
      release();

      const second = await suite.start();
      await suite.whenDelivered(second.api, 30_000);
      const row = (await second.api.call<DeliveryPage>('listDeliveries', {})).deliveries[0]!;
      const sent = texts();
      // Part 2 twice: once before the kill (its answer lost), once resent with the marker; every other part once.
      expect(sent).toHaveLength(row.chunksTotal + 1);
      expect(sent.filter((text) => text.startsWith(RESEND_MARKER))).toHaveLength(1);
      expect(sent[2]!.startsWith(RESEND_MARKER)).toBe(true);
      expect(sent[2]!.replace(`${RESEND_MARKER}\n`, '')).toBe(sent[1]);
      const shown = [sent[0], ...sent.slice(2)].map((text) => text!.replace(`${RESEND_MARKER}\n`, '')).join('\n\n');
      expect([...shown.matchAll(/Part (\d+): bold \1 and/g)].map((match) => Number(match[1]))).toEqual(paragraphs.map((_, i) => i));
    }, 90_000);

    it('answers, after a restart, messages sent while it was down and one taken but not yet saved when it was killed, each once', async () => {
      const platforms = { signal: { daemon: fake.address, account: fake.account.number, allowFrom: [alice.number] } };
      const hold = suite.file('hold-intake');
      writeFileSync(hold, '');
      suite.use(platforms, { HOMING_TEST_HOLD_INTAKE: hold });
      suite.configure();
      const first = await suite.start();
      await waitUntil('the gateway subscribed', () => fake.subscribers === 1, 20_000);
      fake.userSays({ from: alice, text: 'taken, then killed' });
      // signal-cli handed it over (and confirmed it to Signal); the pipeline holds it before its save.
      await waitUntil('the message held before its save', () => existsSync(`${hold}.held`), 20_000);
      expect(fake.handed.size).toBe(1);
      await suite.crash(first.gateway);
      unlinkSync(hold);
      suite.use(platforms);
      // The daemon hears of the dead connection a moment after the kill; before that it would push to it (the gap docs/platforms.md names).
      await waitUntil('the daemon saw the gateway go', () => fake.subscribers === 0, 10_000);
      fake.userSays({ from: alice, text: 'while down 1' });
      fake.userSays({ from: alice, text: 'while down 2' });
      expect(fake.queue).toHaveLength(2);

      const second = await suite.start();
      await waitUntil('three replies', () => texts().length === 3, 40_000).catch((error: unknown) => {
        throw new Error(`${String(error)}; sent ${JSON.stringify(texts())}\n${second.gateway.output().slice(-3000)}`);
      });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(texts()).toEqual(['You said: taken, then killed', 'You said: while down 1', 'You said: while down 2']);
      expect((await userTurns(second.api)).sort()).toEqual(['taken, then killed', 'while down 1', 'while down 2']);
      expect(fake.lost).toEqual([]);
    }, 90_000);
  },
};
