import { FakeTelegram, type FakeUser } from '../support/fake-telegram';
import { waitUntil } from '../support/wait';
import type { ConformanceWorld, Where } from './world';

const GROUP = -1001234567890;
/** More than one getUpdates page (at most 100 updates a call). */
const FLOOD_SIZE = 150;

/**
 * Telegram's row of the conformance suite: the fake Bot API (real HTTP on
 * loopback, telegram-bot-api's offset, expiry and long-poll behaviour), Alice
 * allowed to talk to the bot by direct message and, mentioning it, in a
 * supergroup. Telegram keeps updates while Homing is down (24 hours), pages
 * its catch-up by 100 updates per getUpdates, and has no server-side
 * deduplication and no addressing state (a message addresses the bot by its
 * own mention or reply), so `dedup` and `remembers` are absent.
 */
export async function startTelegramWorld(): Promise<ConformanceWorld> {
  const fake = new FakeTelegram();
  await fake.start();
  const alice: FakeUser = fake.addUser({ id: 7000000001, first_name: 'Alice' });
  fake.addChat({ id: GROUP, type: 'supergroup', title: 'Conformance' });
  const mention = `@${fake.bot.username}`;
  const chatOf = (where: Where) => (where === 'direct' ? alice.id : GROUP);
  let floods = 0;

  const say = (text: string, where: Where) => {
    if (where === 'direct') fake.userSays({ from: alice, text });
    else fake.userSays({ from: alice, chatId: GROUP, text: `${mention} ${text}`, entities: [{ type: 'mention', offset: 0, length: mention.length }] });
  };

  return {
    platform: 'telegram',
    platformsConfig: {
      telegram: {
        apiRoot: fake.apiRoot,
        tokenEnv: 'TELEGRAM_TOKEN',
        allowFrom: [String(alice.id)],
        groups: { [String(GROUP)]: {} },
        pollTimeoutSeconds: 2,
      },
    },
    env: { TELEGRAM_TOKEN: fake.token },
    keepsWhileDown: true,
    places: ['direct', 'group'],
    async whenBotReady(timeoutMs) {
      // A poll that began after this call: a poll still open from a stopped gateway does not count.
      const polls = () => fake.requests.filter((request) => request.method === 'getUpdates').length;
      const before = polls();
      await waitUntil('the bot polling the fake Bot API', () => polls() > before && fake.polling, timeoutMs);
    },
    async say(text, where) {
      say(text, where);
    },
    async replies(where) {
      return fake.sentTo(chatOf(where)).map((message) => message.text);
    },
    async flood() {
      const round = ++floods;
      const texts = Array.from({ length: FLOOD_SIZE }, (_, i) => `flood ${round}.${i + 1}`);
      for (const text of texts) say(text, 'direct');
      return texts;
    },
    failNextCatchUp() {
      let failed = false;
      fake.fault((method) => {
        if (method !== 'getUpdates' || failed) return undefined;
        failed = true;
        // What a proxy in front of the Bot API answers when its upstream is gone for a moment.
        return { kind: 'error', code: 502, description: 'Bad Gateway' };
      });
    },
    async sendFile(file, where) {
      const chatId = chatOf(where);
      // In a group a caption addresses the bot as a text does: by its mention.
      const caption = file.caption === undefined ? undefined : where === 'direct' ? file.caption : `${mention} ${file.caption}`;
      const captioned = caption === undefined ? {} : { caption, ...(where === 'group' ? { captionEntities: [{ type: 'mention', offset: 0, length: mention.length }] } : {}) };
      if (file.kind === 'image') fake.userSendsPhoto(chatId, alice, file.bytes, captioned);
      else if (file.kind === 'voice') fake.userSendsVoice(chatId, alice, file.bytes, { ...captioned, mimeType: file.mime });
      else fake.userSendsDocument(chatId, alice, file.bytes, { ...captioned, fileName: file.name, mimeType: file.mime });
    },
    holdDownloads: () => fake.holdDownloads(),
    dispose: () => fake.stop(),
  };
}
