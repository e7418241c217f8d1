import { compareTs, FakeSlack, type FakeSlackUser } from '../support/fake-slack';
import { firstHandings, isMidReply, pollUntil, requestIn, restartFake, sleep, startFake, streamsOf, type ChaosPlatform } from './platform';

const CHANNEL_NAME = 'group';

/** The bot's text as people read it: Slack shows `&amp;`, `&lt;`, `&gt;` as the characters. */
const shown = (text: string) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/**
 * The chaos run on Slack: the fake Slack (the Web API on real HTTP, Socket Mode
 * on a real WebSocket, Slack's own libraries unchanged on the other side),
 * people writing in one channel (mentioning the bot) and by direct message. A
 * "server restart" takes Slack away (connections refused, sockets dropped) and
 * brings it back on the same port, as a Slack outage ends; people keep writing
 * meanwhile, as Slack keeps their messages, and events not acknowledged are
 * sent again at once, after a minute and after five (test/fixtures/slack-api.md [retries]).
 *
 * A message counts as handed to Homing the first time it reached the bot: in
 * an event's envelope (re-sends included) or in a history page it read.
 */
export async function startSlackPlatform(users: readonly string[], register: (dispose: () => Promise<void>) => void): Promise<ChaosPlatform> {
  const fake = new FakeSlack();
  register(() => fake.dispose());
  await startFake(fake, () => undefined);
  const port = Number(new URL(fake.apiUrl).port);
  const channel = fake.addChannel('chaos');
  const people = new Map<string, FakeSlackUser>(users.map((name) => [name, fake.addUser(name)]));
  const dms = new Map<string, string>([...people].map(([name, user]) => [name, fake.dmWith(user).id]));
  const byChannel = new Map<string, string>([[channel.id, CHANNEL_NAME], ...[...dms].map(([name, id]) => [id, name] as const)]);
  /** message ts → request id. */
  const requestOf = new Map<string, string>();
  let lastMidReplyAt = 0;
  fake.onSend((message) => {
    if (shown(message.text).split('\n').some(isMidReply)) lastMidReplyAt = message.at;
  });

  return {
    platformsConfig: {
      slack: {
        apiUrl: fake.apiUrl,
        appTokenEnv: 'SLACK_APP_TOKEN',
        botTokenEnv: 'SLACK_BOT_TOKEN',
        allowFrom: [...people.values()].map((user) => user.id),
        channels: { [channel.id]: {} },
      },
    },
    env: { SLACK_APP_TOKEN: fake.appToken, SLACK_BOT_TOKEN: fake.botToken },
    users,
    group: CHANNEL_NAME,
    whenBotReady: (timeoutMs) => pollUntil(() => fake.connectedSockets > 0, timeoutMs, `the bot did not connect to the fake Slack in ${timeoutMs / 1000} s`),
    send(user, inGroup, text) {
      const from = people.get(user)!;
      const message = inGroup ? fake.userSays({ from, channelId: channel.id, text, mentionBot: true }) : fake.userSays({ from, channelId: dms.get(user)!, text });
      const id = requestIn(text);
      if (id) requestOf.set(message.ts, id);
      return true;
    },
    async restartServer(random) {
      await restartFake(fake, port, random);
      // Back once the bot is: reconnected, with what was written meanwhile in its hands (re-sent or read).
      for (let waited = 0; waited < 60_000; waited += 50) {
        if (fake.connectedSockets > 0 && [...requestOf.keys()].every((ts) => fake.handed.has(ts))) return;
        await sleep(50);
      }
    },
    lastMidReplyAt: () => lastMidReplyAt,
    streams: () => streamsOf(CHANNEL_NAME, users, fake.sent.map((message) => ({ conversation: byChannel.get(message.channel), at: message.at, text: shown(message.text) }))),
    handed() {
      // Slack's order is its messages' order (their ts), however the bot came to see them: replies must follow it.
      const firsts = [...fake.handed]
        .flatMap(([ts, times]) => {
          const id = requestOf.get(ts);
          return id === undefined ? [] : [{ ts, id, at: times[0]! }];
        })
        .sort((a, b) => compareTs(a.ts, b.ts));
      return firstHandings(firsts);
    },
    observerGaps: () => 0,
    dispose: () => fake.dispose(),
  };
}
