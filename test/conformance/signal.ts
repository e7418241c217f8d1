import { FakeSignalCli } from '../support/fake-signal-cli';
import { waitUntil } from '../support/wait';
import type { ConformanceFile, ConformanceWorld, Where } from './world';

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
 *
 * A file goes as Signal's apps send one: the text typed with it is the
 * message's body (a mention of the bot in a group), the file its attachment,
 * which signal-cli downloads as it takes the message; the gateway fetches it
 * with `getAttachment`, which `holdDownloads` holds. A voice note carries no
 * text: a caption goes first as a message of its own, and in a group the
 * voice note quotes the bot's last message there (or mentions the bot).
 * signal-cli's JSON marks no voice note (JsonAttachment has no such field), so
 * it arrives as audio.
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
    async sendFile(file: ConformanceFile, where: Where) {
      const place = where === 'group' ? { group, mentionBot: true } : {};
      const attachment = { bytes: file.bytes, mime: file.mime, ...(file.kind === 'voice' ? {} : { name: file.name }) };
      if (file.kind !== 'voice') {
        fake.userSays({ from: person, text: file.caption ?? '', attachments: [attachment], ...place });
        return;
      }
      if (file.caption !== undefined) fake.userSays({ from: person, text: file.caption, ...place });
      const botsLast = where === 'group' ? fake.sentTo(group).at(-1) : undefined;
      if (where === 'direct') fake.userSays({ from: person, text: '', attachments: [attachment] });
      else if (botsLast) fake.userSays({ from: person, text: '', group, attachments: [attachment], quote: { timestamp: botsLast.timestamp, author: fake.account } });
      else fake.userSays({ from: person, text: '', group, mentionBot: true, attachments: [attachment] });
    },
    holdDownloads: () => fake.holdDownloads(),
    dispose: () => fake.stop(),
  };
}
