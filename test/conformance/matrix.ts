import { FakeMatrix } from '../support/fake-matrix';
import { waitUntil } from '../support/wait';
import type { ConformanceFile, ConformanceWorld, Where } from './world';

/** More than Synapse hands in one `/messages` page (1 000, synapse/streams/config.py) and than the sync's timeline limit (100). */
const FLOOD_MESSAGES = 1_200;
/** Where among the flood the messages to the bot are: far before the sync's timeline, in the middle, and inside it. */
const FLOOD_ADDRESSED = [2, 480, 1_010, 1_190];
/** More than the sync's timeline limit (100, matrix-adapter.ts SYNC_FILTER): what came before them is read from /messages. */
const CHATTER_AFTER = 150;

/**
 * Matrix's row of the conformance suite, on the fake homeserver (test/support/
 * fake-matrix.ts: Synapse's /sync, /messages and txnId behaviour, each cited
 * there). Alice may talk to the bot, in a direct chat and in a room where Bob
 * talks too; in the room she addresses the bot as Element does (its name and a
 * mention pill, so `m.mentions`). The homeserver keeps every room's history, so
 * a flood while Homing is away is a gap in the next sync, read from /messages.
 * The room comes first in `places`: the suite's cases happen there, where a
 * flood is realistic (a direct chat with 1 200 messages to the bot would be
 * 1 200 turns of the agent).
 */
export async function startMatrixWorld(): Promise<ConformanceWorld> {
  const fake = new FakeMatrix();
  await fake.start();
  const bot = fake.addUser('homing', { displayName: 'Homing' });
  const alice = fake.addUser('alice', { displayName: 'Alice' });
  const bob = fake.addUser('bob', { displayName: 'Bob' });
  const token = fake.issueToken(bot, 'HOMINGCONFORM');
  const rooms: Record<Where, string> = {
    direct: fake.createRoom(alice, { invite: [bot], direct: true }),
    group: fake.createRoom(alice, { name: 'Conformance', invite: [bot], join: [bob] }),
  };
  let floods = 0;
  let threadRoot: string | undefined;

  function say(text: string, where: Where): void {
    if (where === 'direct') fake.userSays(alice, rooms.direct, text);
    else fake.userSays(alice, rooms.group, `Homing: ${text}`, { mentions: [bot] });
  }

  return {
    platform: 'matrix',
    platformsConfig: { matrix: { homeserver: fake.baseUrl, user: bot, accessTokenEnv: 'MATRIX_TOKEN', allowFrom: [alice], pollTimeoutSeconds: 2 } },
    env: { MATRIX_TOKEN: token },
    keepsWhileDown: true,
    places: ['group', 'direct'],
    async whenBotReady(timeoutMs) {
      await waitUntil(
        'the bot in its rooms and syncing',
        () => fake.isPolling(bot) && Object.values(rooms).every((room) => fake.membership(bot, room) === 'join'),
        timeoutMs,
      );
    },
    async say(text, where) {
      say(text, where);
    },
    async replies(where) {
      return fake.postedBy(bot, rooms[where]).map((message) => message.body);
    },
    async flood() {
      const round = ++floods;
      const addressed: string[] = [];
      for (let i = 0; i < FLOOD_MESSAGES; i++) {
        if (FLOOD_ADDRESSED.includes(i)) {
          const text = `flood ${round} message ${i}`;
          say(text, 'group');
          addressed.push(text);
        } else fake.userSays(i % 2 === 0 ? bob : alice, rooms.group, `chatter ${round}.${i}`);
      }
      return addressed;
    },
    // Matrix's catch-up read of what was missed is /messages, used when a sync
    // skipped part of a room (`limited`). Bob's chatter after what was said pushes
    // it out of the next sync's timeline, so it can only come through /messages,
    // whose next answer is a 502.
    failNextCatchUp() {
      for (let i = 0; i < CHATTER_AFTER; i++) fake.userSays(bob, rooms.group, `chatter after ${i}`);
      fake.failNextMessages();
    },
    remembers: {
      where: 'group',
      // The bot answers in a thread it was asked in; after the restart, a message there needs no mention.
      async before() {
        const root = fake.userSays(alice, rooms.group, 'a topic of our own');
        threadRoot = root.event_id;
        const answered = fake.postedBy(bot, rooms.group).length;
        fake.userSays(alice, rooms.group, 'Homing: about this topic', { threadRoot, mentions: [bot] });
        await waitUntil('the bot answering in the thread', () => fake.postedBy(bot, rooms.group).length > answered, 20_000);
      },
      async after(text) {
        if (threadRoot === undefined) throw new Error('remembers.after() before remembers.before()');
        fake.userSays(alice, rooms.group, text, { threadRoot });
      },
    },
    dedup: {
      windowMs: fake.txnIdWindowMs,
      hangNextSend() {
        let taken = false;
        return fake.fault((request) => {
          if (taken || request.method !== 'PUT' || !request.path.includes('/send/m.room.message/')) return undefined;
          taken = true;
          return { kind: 'hang-after' };
        });
      },
      forget() {
        fake.forgetTxnIds();
      },
    },
    // Matrix has captions (spec v1.10): the caption is the file's own text. In the room
    // Alice addresses the bot there as she does in text: its name and a mention pill.
    async sendFile(file: ConformanceFile, where: Where) {
      const msgtype = file.kind === 'image' ? 'm.image' : file.kind === 'voice' ? 'm.audio' : 'm.file';
      const voice = file.kind === 'voice' ? { durationMs: 3_000 } : undefined;
      if (where === 'direct') {
        fake.userSendsFile(alice, rooms.direct, { msgtype, bytes: file.bytes, mime: file.mime, name: file.name, ...(file.caption !== undefined ? { caption: file.caption } : {}), ...(voice ? { voice } : {}) });
      } else {
        const caption = file.caption !== undefined ? `Homing: ${file.caption}` : 'Homing';
        fake.userSendsFile(alice, rooms.group, { msgtype, bytes: file.bytes, mime: file.mime, name: file.name, caption, mentions: [bot], ...(voice ? { voice } : {}) });
      }
    },
    holdDownloads: () => fake.holdDownloads(),
    dispose: () => fake.stop(),
  };
}
