import { FakeSignalCli } from '../support/fake-signal-cli';
import { waitUntil } from '../support/wait';
import type { ConformanceWorld, Where } from './world';

/**
 * The conformance row for Signal: the fake signal-cli daemon in manual receive
 * mode, with Signal's queue behind it (test/fixtures/signal-cli.md). A person
 * allowed in direct messages (`allowFrom`) writes to the bot directly
 * ('direct', first: the queue behind the daemon is what an outage tests) and
 * mentions it in a listed group ('group').
 *
 * Signal's server keeps every message for the linked device until signal-cli
 * takes one, and signal-cli takes them only while Homing is subscribed, so the
 * cases that need messages kept while Homing is down apply. The service pages
 * nothing (it hands the queue over message by message) and has no catch-up
 * read to fail, so `flood` and `failNextCatchUp` are absent; `send` has no
 * idempotency key, so there is no dedup window: every resend is marked.
 */
export async function startSignalWorld(): Promise<ConformanceWorld> {
  const fake = await new FakeSignalCli().start();
  const person = fake.addPerson('alice');
  const group = fake.addGroup('Home', [person]);

  return {
    platform: 'signal',
    platformsConfig: { signal: { daemon: fake.address, account: fake.account.number, allowFrom: [person.number], groups: { [group.id]: {} } } },
    env: {},
    keepsWhileDown: true,
    places: ['direct', 'group'],
    async whenBotReady(timeoutMs) {
      // Subscribed: signal-cli now takes messages for the gateway and pushes them to it.
      await waitUntil('the gateway subscribed to the fake signal-cli', () => fake.subscribers > 0, timeoutMs);
    },
    async say(text, where: Where) {
      if (where === 'group') fake.userSays({ from: person, group, text, mentionBot: true });
      else fake.userSays({ from: person, text });
    },
    async replies(where) {
      return fake.sentTo(where === 'group' ? group : person).map((sent) => sent.message);
    },
    dispose: () => fake.stop(),
  };
}
