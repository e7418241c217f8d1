import { FakeMatrix } from '../support/fake-matrix';
import { isMidReply, pollUntil, requestIn, startFake, streamsOf, type ChaosPlatform } from './platform';

const GROUP_NAME = 'group';

/**
 * The chaos run on Matrix: the fake homeserver (real HTTP on loopback, /sync
 * and txnId semantics of Synapse), people writing in one room (naming the bot)
 * and in a direct chat each. A "server restart" drops every connection and
 * refuses new ones for a while, keeping what the server stored — rooms, devices
 * and the txnId table, as Synapse keeps its `event_txn_id` rows — while people
 * keep writing (their clients queue the messages and the server takes them back up).
 *
 * With durable intake every message event the bot's sync could see counts as
 * handed to Homing; with txnIds a resend is deduplicated by the server, so the
 * run expects no repeat at all, marked or not.
 */
export async function startMatrixPlatform(users: readonly string[], register: (dispose: () => Promise<void>) => void): Promise<ChaosPlatform> {
  const fake = await startFake(new FakeMatrix(), register);
  const bot = fake.addUser('homing', { displayName: 'Homing' });
  const token = fake.issueToken(bot, 'HOMINGCHAOS');
  const people = new Map<string, string>(users.map((name) => [name, fake.addUser(name, { displayName: name })]));
  const group = fake.createRoom(people.get(users[0]!)!, { name: 'Chaos', join: [...people.values()].slice(1), invite: [bot] });
  const byRoom = new Map<string, string>([[group, GROUP_NAME]]);
  const directs = new Map<string, string>();
  for (const [name, userId] of people) {
    const room = fake.createRoom(userId, { invite: [bot], direct: true });
    directs.set(name, room);
    byRoom.set(room, name);
  }
  /** Request id → when it was posted (the server has it from then on: a sync hands it over). */
  const postedAt = new Map<string, number>();
  let lastMidReplyAt = 0;
  fake.onPost((message) => {
    if (message.sender === bot && message.body.split('\n').some(isMidReply)) lastMidReplyAt = message.at;
  });
  let down = false;

  return {
    platformsConfig: {
      matrix: {
        homeserver: fake.baseUrl,
        user: bot,
        accessTokenEnv: 'MATRIX_TOKEN',
        allowFrom: [...people.values()],
        pollTimeoutSeconds: 5,
      },
    },
    env: { MATRIX_TOKEN: token },
    users,
    group: GROUP_NAME,
    async whenBotReady(timeoutMs) {
      const rooms = [group, ...directs.values()];
      await pollUntil(
        () => fake.isPolling(bot) && rooms.every((room) => fake.membership(bot, room) === 'join'),
        timeoutMs,
        `the bot did not join its rooms and sync on the fake homeserver in ${timeoutMs / 1000} s`,
      );
    },
    send(user, inGroup, text) {
      if (down) return false;
      const from = people.get(user)!;
      if (inGroup) fake.userSays(from, group, `homing: ${text}`, { mentions: [bot] });
      else fake.userSays(from, directs.get(user)!, text);
      const id = requestIn(text);
      if (id && !postedAt.has(id)) postedAt.set(id, Date.now());
      return true;
    },
    async restartServer(random) {
      down = true;
      try {
        await fake.restart(1_000 + random() * 2_000);
      } finally {
        down = false;
      }
    },
    lastMidReplyAt: () => lastMidReplyAt,
    streams: () => streamsOf(GROUP_NAME, users, fake.postedBy(bot).map((message) => ({ conversation: byRoom.get(message.roomId), at: message.at, text: message.body }))),
    handed() {
      const entries = [...postedAt].sort((a, b) => a[1] - b[1]);
      return { handed: new Map(entries), handedOrder: new Map(entries.map(([id], index) => [id, index])) };
    },
    observerGaps: () => 0,
    dispose: () => fake.stop(),
  };
}
