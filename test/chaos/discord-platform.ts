import { compareIds, FakeDiscord, type FakeDiscordUser } from '../support/fake-discord';
import { firstHandings, isMidReply, pollUntil, requestIn, restartFake, sleep, startFake, streamsOf, type ChaosPlatform } from './platform';

const CHANNEL_NAME = 'group';

/**
 * The chaos run on Discord: the fake Discord (REST on real HTTP, the Gateway on
 * a real WebSocket, discord.js unchanged on the other side), people writing
 * in one server channel (mentioning the bot) and by direct message. A "server
 * restart" takes Discord away (connections refused, sockets dropped) and brings
 * it back on the same port with its sessions, as a Discord outage ends; people
 * keep writing meanwhile, as Discord keeps their messages.
 *
 * A message counts as handed to Homing the first time it reached the bot:
 * dispatched on the Gateway (replays included) or returned by a fetch of
 * missed messages.
 */
export async function startDiscordPlatform(users: readonly string[], register: (dispose: () => Promise<void>) => void): Promise<ChaosPlatform> {
  const fake = await startFake(new FakeDiscord(), register);
  const port = Number(new URL(fake.apiUrl).port);
  const guild = fake.addGuild('Chaos');
  const channel = fake.addChannel(guild, 'chaos');
  const people = new Map<string, FakeDiscordUser>(users.map((name) => [name, fake.addUser(name)]));
  const dms = new Map<string, string>([...people].map(([name, user]) => [name, fake.dmChannel(user).id]));
  const byChannel = new Map<string, string>([[channel.id, CHANNEL_NAME], ...[...dms].map(([name, id]) => [id, name] as const)]);
  /** message id → request id. */
  const requestOf = new Map<string, string>();
  let lastMidReplyAt = 0;
  fake.onSend((message) => {
    if (message.content.split('\n').some(isMidReply)) lastMidReplyAt = message.at;
  });

  return {
    platformsConfig: {
      discord: {
        apiUrl: fake.apiUrl,
        tokenEnv: 'DISCORD_TOKEN',
        allowFrom: [...people.values()].map((user) => user.id),
        channels: { [channel.id]: {} },
      },
    },
    env: { DISCORD_TOKEN: fake.token },
    users,
    group: CHANNEL_NAME,
    whenBotReady: (timeoutMs) =>
      pollUntil(() => fake.connectedSessions > 0, timeoutMs, `the bot did not connect to the fake Discord Gateway in ${timeoutMs / 1000} s`),
    send(user, inGroup, text) {
      const from = people.get(user)!;
      const message = inGroup ? fake.userSays({ from, channelId: channel.id, content: text, mentionBot: true }) : fake.userSays({ from, channelId: dms.get(user)!, content: text });
      const id = requestIn(text);
      if (id) requestOf.set(message.id, id);
      return true;
    },
    async restartServer(random) {
      await restartFake(fake, port, random);
      // Back once the bot is: reconnected, with what was written meanwhile in its hands (replayed or fetched).
      for (let waited = 0; waited < 60_000; waited += 50) {
        if (fake.connectedSessions > 0 && [...requestOf.keys()].every((id) => fake.handed.has(id))) return;
        await sleep(50);
      }
    },
    lastMidReplyAt: () => lastMidReplyAt,
    streams: () => streamsOf(CHANNEL_NAME, users, fake.sent.map((message) => ({ conversation: byChannel.get(message.channel_id), at: message.at, text: message.content }))),
    handed() {
      // Discord's order is its messages' order (their ids), however the bot came to see them
      // (live, replayed on resume, or fetched after a restart): replies must follow it.
      const firsts = [...fake.handed]
        .flatMap(([messageId, times]) => {
          const id = requestOf.get(messageId);
          return id === undefined ? [] : [{ messageId, id, at: times[0]! }];
        })
        .sort((a, b) => compareIds(a.messageId, b.messageId));
      return firstHandings(firsts);
    },
    observerGaps: () => 0,
    dispose: () => fake.stop(),
  };
}
