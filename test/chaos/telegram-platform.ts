import { FakeTelegram, type FakeUser } from '../support/fake-telegram';
import { firstHandings, isMidReply, pollUntil, requestIn, restartFake, startFake, streamsOf, type ChaosPlatform } from './platform';

const GROUP = -1001234567890;
const GROUP_NAME = 'group';

/**
 * The chaos run on Telegram: the fake Bot API (real HTTP on loopback, the
 * offset and long-poll semantics of the real one), people writing in one
 * supergroup (mentioning the bot) and by direct message. A "server restart"
 * takes the API away (connections refused) and brings it back on the same
 * port; people keep writing meanwhile, as Telegram keeps their messages.
 *
 * With durable intake nothing handed to the bot may be lost, so every update
 * the fake handed (at least once) counts as handed to Homing.
 */
export async function startTelegramPlatform(users: readonly string[], register: (dispose: () => Promise<void>) => void): Promise<ChaosPlatform> {
  const fake = await startFake(new FakeTelegram(), register);
  const port = Number(new URL(fake.apiRoot).port);
  const people = new Map<string, FakeUser>(users.map((name, i) => [name, fake.addUser({ id: 7000000001 + i, first_name: name })]));
  fake.addChat({ id: GROUP, type: 'supergroup', title: 'Chaos' });
  const byChat = new Map<number, string>([[GROUP, GROUP_NAME], ...[...people].map(([name, user]) => [user.id, name] as const)]);
  /** update_id → request id. */
  const requestOf = new Map<number, string>();
  let lastMidReplyAt = 0;
  fake.onSend((message) => {
    if (message.text.split('\n').some(isMidReply)) lastMidReplyAt = message.at;
  });
  const mention = `@${fake.bot.username}`;

  return {
    platformsConfig: {
      telegram: {
        apiRoot: fake.apiRoot,
        tokenEnv: 'TELEGRAM_TOKEN',
        allowFrom: [...people.values()].map((user) => String(user.id)),
        groups: { [String(GROUP)]: {} },
        pollTimeoutSeconds: 5,
      },
    },
    env: { TELEGRAM_TOKEN: fake.token },
    users,
    group: GROUP_NAME,
    whenBotReady: (timeoutMs) => pollUntil(() => fake.polling, timeoutMs, `the bot did not poll the fake Bot API in ${timeoutMs / 1000} s`),
    send(user, inGroup, text) {
      const from = people.get(user)!;
      if (inGroup) fake.userSays({ from, chatId: GROUP, text: `${mention} ${text}`, entities: [{ type: 'mention', offset: 0, length: mention.length }] });
      else fake.userSays({ from, text });
      const update = fake.pendingUpdates().at(-1)!;
      const id = requestIn(text);
      if (id) requestOf.set(update.update_id, id);
      return true;
    },
    async restartServer(random) {
      await restartFake(fake, port, random);
    },
    lastMidReplyAt: () => lastMidReplyAt,
    streams: () => streamsOf(GROUP_NAME, users, fake.sent.map((message) => ({ conversation: byChat.get(message.chatId), at: message.at, text: message.text }))),
    handed() {
      const firsts = [...fake.handed].flatMap(([updateId, times]) => {
        const id = requestOf.get(updateId);
        return id === undefined ? [] : [{ id, at: times[0]! }];
      });
      return firstHandings(firsts.sort((a, b) => a.at - b.at));
    },
    observerGaps: () => 0,
    dispose: () => fake.stop(),
  };
}
