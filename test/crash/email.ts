import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { RESEND_MARKER } from '../../src/main/gateway/delivery/marker';
import type { DeliveryPage, PlatformStatus } from '../../src/shared/api';
import { userTurns } from '../support/api-socket';
import { bodyOf, EmailWorld, whenEmailConnected } from '../support/email-world';
import { rawMail } from '../support/mail';
import { headerOf } from '../support/smtp-sink';
import { waitUntil } from '../support/wait';
import type { CrashRow } from './suite';

const AGENT = { address: 'agent@test.local', password: 'agentpw' };
const ALICE = 'alice@example.org';

/**
 * Email on a real dovecot and the SMTP sink, killed and left without its IMAP
 * server: every message answered once, a reply that may have gone out resent
 * visibly marked and recognisable by its Message-ID.
 */
export const emailCrashes: CrashRow = {
  platform: 'email',
  cases(suite) {
    let world: EmailWorld;

    beforeAll(async () => {
      world = await EmailWorld.start([AGENT]);
    }, 30_000);

    afterAll(async () => {
      await world?.dispose();
    });

    beforeEach(() => {
      suite.use(world.platformsConfig(AGENT.address, { allowFrom: [ALICE] }), world.envFor(AGENT.address));
    });

    afterEach(() => {
      world.sink.beforeAccept(undefined);
    });

    /** A gateway on the case's data directory, once its email platform is connected. */
    async function start() {
      const started = await suite.start();
      await whenEmailConnected(started.api);
      return started;
    }

    it('killed after the SMTP server took the reply and before the ledger marked it delivered: one resend, same Message-ID, marked', async () => {
      suite.configure();
      const first = await start();
      const before = world.sink.to(ALICE).length;
      let killed = false;
      // The whole message is in (the server will deliver it); the gateway dies before it hears 250.
      world.sink.beforeAccept(async () => {
        world.sink.beforeAccept(undefined);
        await suite.kill(first.gateway);
        killed = true;
        return undefined;
      });
      await world.dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, subject: 'Invoice', messageId: '<crash1@example.org>', text: 'did you get the invoice?' }));
      await waitUntil('the reply taken in and the gateway killed', () => killed && world.sink.to(ALICE).length === before + 1, 30_000);
      expect(first.gateway.child.signalCode).toBe('SIGKILL');

      const second = await start();
      await waitUntil('the resend', () => world.sink.to(ALICE).length === before + 2, 30_000);
      // Nothing more comes: the resend was marked delivered.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const [original, resend] = world.sink.to(ALICE).slice(before);
      expect(world.sink.to(ALICE)).toHaveLength(before + 2);
      expect(original!.accepted && resend!.accepted).toBe(true);
      expect(headerOf(resend!.raw, 'Message-ID')).toBe(headerOf(original!.raw, 'Message-ID'));
      expect(headerOf(resend!.raw, 'In-Reply-To')).toBe('<crash1@example.org>');
      const originalBody = await bodyOf(original!);
      expect(originalBody).toContain('did you get the invoice?');
      expect(originalBody.startsWith(RESEND_MARKER)).toBe(false);
      expect(await bodyOf(resend!)).toBe(`${RESEND_MARKER}\n${originalBody}`);
      expect((await userTurns(second.api)).filter((text) => text.includes('invoice'))).toHaveLength(1);
    }, 120_000);

    it('with IMAP restarted (and the gateway killed) handles no message twice and misses none', async () => {
      suite.configure();
      let running = await start();
      const before = world.sink.to(ALICE).length;
      const ask = (n: number) => world.dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, subject: `Question ${n}`, messageId: `<q${n}@restart.example.org>`, text: `question number ${n}` }));
      const answered = () => world.sink.to(ALICE).slice(before).map((message) => headerOf(message.raw, 'In-Reply-To'));

      await ask(1);
      await waitUntil('the first answer', () => answered().length === 1, 30_000);

      // Mail arrives, and IMAP goes away at once: whether or not the gateway had read it yet.
      await ask(2);
      await world.dovecot.stop();
      await waitUntil(
        'email degraded (IMAP away)',
        async () => (await running.api.call<PlatformStatus[]>('listPlatforms')).some((platform) => platform.name === 'email' && platform.state === 'degraded'),
        30_000,
      );
      await world.dovecot.start();
      await ask(3);
      await waitUntil('the first three answers', () => answered().length >= 3, 60_000);

      // Killed while idle (every reply marked delivered); mail arrives while it is down, and IMAP restarts once more.
      await waitUntil(
        'three replies marked delivered',
        async () => (await running.api.call<DeliveryPage>('listDeliveries', { state: 'delivered' })).deliveries.length === 3,
        30_000,
      );
      await suite.kill(running.gateway);
      await ask(4);
      await world.dovecot.stop();
      await world.dovecot.start();
      await ask(5);
      running = await start();
      await waitUntil('all five answers', () => answered().length >= 5, 60_000);
      await new Promise((resolve) => setTimeout(resolve, 3_000));

      // Each question answered once. Five threads are five conversations, answered side by side:
      // 4 and 5 (both read after the restart) may be answered in either order.
      expect([...answered()].sort()).toEqual([1, 2, 3, 4, 5].map((n) => `<q${n}@restart.example.org>`));
      expect(await Promise.all(world.sink.to(ALICE).slice(before).map(async (message) => (await bodyOf(message)).startsWith(RESEND_MARKER)))).toEqual([false, false, false, false, false]);
      const turns = (await userTurns(running.api)).filter((text) => text.includes('question number'));
      // Five threads, five conversations: each question saved once.
      expect(turns.map((text) => /question number (\d)/.exec(text)?.[1]).sort()).toEqual(['1', '2', '3', '4', '5']);
    }, 180_000);
  },
};
