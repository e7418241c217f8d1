import { FakeSlack, type FakeSlackChannel } from '../support/fake-slack';
import { waitUntil } from '../support/wait';
import type { ConformanceFile, ConformanceWorld, Where } from './world';

/** Messages in the flooded channel while Homing is down: more than three history pages of 200. */
const FLOOD_MESSAGES = 650;
/** Where among them the person mentions the bot: deep in the older pages. */
const FLOOD_MENTION_AT = 150;

/**
 * The conformance row for Slack: the fake Slack (the Web API on real HTTP,
 * Socket Mode on a real WebSocket; @slack/socket-mode and @slack/web-api run
 * against it unchanged). A person allowed in DMs (`allowFrom`) mentions the bot
 * in a listed channel ('group', the suite's first place) and writes to it by DM
 * ('direct').
 *
 * 'group' comes first: a channel's catch-up is the demanding one (history
 * paged newest first, back to the position). Slack re-sends an unacknowledged event at once, after a minute and
 * after five (test/fixtures/slack-api.md [retries]); the fake does so too, so
 * an event the killed gateway never acknowledged may come again: every case
 * counts only the answers to its own texts, and once.
 *
 * No `dedup`: chat.postMessage has no idempotency key, so every resend that may
 * have arrived carries the marker (the suite's marker cases cover it).
 *
 * Files: the person shares a file with its caption as the message's text (a
 * mention first in the channel), as Slack's clients do; a voice note is a
 * clip recorded in Slack (`slack_audio`). The bot fetches it from the fake's
 * files route with its token, where `holdDownloads` holds it.
 */
export async function startSlackWorld(): Promise<ConformanceWorld> {
  const fake = new FakeSlack();
  await fake.start();
  const person = fake.addUser('alice');
  const chatter = fake.addUser('chatter');
  const group = fake.addChannel('homing');
  const dm = fake.dmWith(person);
  const channelOf = (where: Where): FakeSlackChannel => (where === 'direct' ? dm : group);
  let floods = 0;

  return {
    platform: 'slack',
    platformsConfig: {
      slack: { apiUrl: fake.apiUrl, appTokenEnv: 'SLACK_APP_TOKEN', botTokenEnv: 'SLACK_BOT_TOKEN', allowFrom: [person.id], channels: { [group.id]: {} } },
    },
    env: { SLACK_APP_TOKEN: fake.appToken, SLACK_BOT_TOKEN: fake.botToken },
    keepsWhileDown: true,
    places: ['group', 'direct'],
    async whenBotReady(timeoutMs) {
      // hello on a fresh connection: the adapter starts its catch-up then.
      await waitUntil('the bot connected to the fake Slack in Socket Mode', () => fake.connectedSockets > 0, timeoutMs);
    },
    async say(text, where) {
      fake.userSays({ from: person, channelId: channelOf(where).id, text, mentionBot: where === 'group' });
    },
    async replies(where) {
      const unescape = (text: string) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
      return fake
        .messages(channelOf(where).id)
        .filter((message) => message.user === fake.bot.id && message.thread_ts === undefined)
        .map((message) => unescape(message.text));
    },
    async flood() {
      const round = ++floods;
      const addressed = [`flood ${round}: the mention after ${FLOOD_MENTION_AT} others`, `flood ${round}: the last mention`];
      for (let i = 0; i < FLOOD_MESSAGES; i++) {
        if (i === FLOOD_MENTION_AT) fake.userSays({ from: person, channelId: group.id, text: addressed[0]!, mentionBot: true });
        else fake.userSays({ from: chatter, channelId: group.id, text: `chatter ${round}.${i}` });
      }
      fake.userSays({ from: person, channelId: group.id, text: addressed[1]!, mentionBot: true });
      return addressed;
    },
    failNextCatchUp() {
      fake.failHistoryReads(1);
    },
    async sendFile(file: ConformanceFile, where: Where) {
      fake.userSays({
        from: person,
        channelId: channelOf(where).id,
        text: file.caption ?? '',
        mentionBot: where === 'group',
        files: [{ name: file.name, mime: file.mime, bytes: file.bytes, ...(file.kind === 'voice' ? { audioClip: { durationMs: 1_000 } } : {}) }],
      });
    },
    holdDownloads: () => fake.holdDownloads(),
    dispose: () => fake.dispose(),
  };
}
