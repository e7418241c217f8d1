import { compareIds, FakeDiscord, type FakeChannel } from '../support/fake-discord';
import { waitUntil } from '../support/wait';
import type { ConformanceFile, ConformanceWorld, Where } from './world';

/** Messages in the flooded channel while Homing is down: more than six pages of 100. */
const FLOOD_MESSAGES = 650;
/** Where among them the person mentions the bot: beyond the 5 pages an old catch-up read. */
const FLOOD_MENTION_AT = 550;
/**
 * Homing trusts Discord's nonce for 2 minutes (the adapter's `nonceWindowMs`;
 * Discord documents "a few minutes" for `enforce_nonce`).
 */
const NONCE_WINDOW_MS = 120_000;
/**
 * One catch-up read as the bot sees it: discord.js retries a 5xx three times
 * by itself (@discordjs/rest `retries: 3`, handleErrors), so four 502s in a row.
 */
const FAILED_ATTEMPTS_PER_READ = 4;

/**
 * The conformance row for Discord: the fake Discord (REST on real HTTP, the
 * Gateway on a real WebSocket; discord.js runs against it unchanged). A person
 * allowed in DMs (`allowFrom`) mentions the bot in a listed server channel
 * ('group', the suite's first place) and writes to it by DM ('direct').
 *
 * 'group' comes first: a listed channel is read after an outage even by a
 * gateway that never answered there, while a DM channel is known to a bot only
 * once it answered in it (Discord lists no DMs to a bot), so a fresh data
 * directory cannot catch up a DM it never saw. A fresh data directory reads the
 * listed channel from two minutes before it first connected (SINCE_MARGIN_MS),
 * so it may answer a mention an earlier case made there again; every case
 * counts only the answers to its own texts.
 *
 * Files go as Discord clients send them: an image or document as an
 * attachment with the caption as the message's content (a mention in the
 * group); a voice note as a voice message (IS_VOICE_MESSAGE: one audio
 * attachment and no content, so a caption goes right before it as a message
 * of its own). A voice message cannot mention anyone, so in the group it is a
 * reply to the bot's latest message there (a reply to the bot addresses it);
 * before the bot wrote there, it goes as an audio attachment with a mention.
 */
export async function startDiscordWorld(): Promise<ConformanceWorld> {
  const fake = new FakeDiscord({ heartbeatIntervalMs: 5_000 });
  await fake.start();
  const person = fake.addUser('alice');
  const chatter = fake.addUser('chatter');
  const group = fake.addChannel(fake.addGuild('Home'), 'homing');
  const dm = fake.dmChannel(person);
  const channelOf = (where: Where): FakeChannel => (where === 'direct' ? dm : group);
  let floods = 0;

  return {
    platform: 'discord',
    platformsConfig: { discord: { apiUrl: fake.apiUrl, tokenEnv: 'DISCORD_TOKEN', allowFrom: [person.id], channels: { [group.id]: {} } } },
    env: { DISCORD_TOKEN: fake.token },
    keepsWhileDown: true,
    places: ['group', 'direct'],
    async whenBotReady(timeoutMs) {
      // IDENTIFY → READY: the adapter starts its catch-up on READY.
      await waitUntil('the bot connected to the fake Discord Gateway', () => fake.connectedSessions > 0, timeoutMs);
    },
    async say(text, where) {
      fake.userSays({ from: person, channelId: channelOf(where).id, content: text, mentionBot: where === 'group' });
    },
    async replies(where) {
      return fake.messages(channelOf(where).id).filter((message) => message.author.id === fake.bot.id).map((message) => message.content);
    },
    async flood() {
      const round = ++floods;
      const addressed = [`flood ${round}: the mention after ${FLOOD_MENTION_AT} others`, `flood ${round}: the last mention`];
      for (let i = 0; i < FLOOD_MESSAGES; i++) {
        if (i === FLOOD_MENTION_AT) fake.userSays({ from: person, channelId: group.id, content: addressed[0]!, mentionBot: true });
        else fake.userSays({ from: chatter, channelId: group.id, content: `chatter ${round}.${i}` });
      }
      fake.userSays({ from: person, channelId: group.id, content: addressed[1]!, mentionBot: true });
      return addressed;
    },
    failNextCatchUp() {
      fake.failHistoryReads(FAILED_ATTEMPTS_PER_READ);
    },
    dedup: {
      windowMs: NONCE_WINDOW_MS,
      hangNextSend() {
        // The next reply to a message written from now on (not a late answer to an earlier one):
        // Discord creates it, and the answer is lost on the way back.
        const after = fake.lastId();
        let hung = false;
        return fake.fault((method, path, body) => {
          if (hung || method !== 'POST' || !/^\/channels\/\d+\/messages$/.test(path)) return undefined;
          const answering = (body as { message_reference?: { message_id?: unknown } } | undefined)?.message_reference?.message_id;
          if (typeof answering !== 'string' || compareIds(answering, after) <= 0) return undefined;
          hung = true;
          return 'hang-after';
        });
      },
      forget() {
        fake.forgetNonces();
      },
    },
    async sendFile(file: ConformanceFile, where: Where) {
      const channelId = channelOf(where).id;
      const upload = { name: file.name, mime: file.mime, bytes: file.bytes };
      if (file.kind !== 'voice') {
        fake.userSays({ from: person, channelId, content: file.caption ?? '', mentionBot: where === 'group', files: [upload] });
        return;
      }
      if (file.caption !== undefined) fake.userSays({ from: person, channelId, content: file.caption, mentionBot: where === 'group' });
      const voice = { ...upload, durationS: 1 };
      if (where === 'direct') {
        fake.userSays({ from: person, channelId, content: '', voice: true, files: [voice] });
        return;
      }
      const botsLast = fake.messages(channelId).filter((message) => message.author.id === fake.bot.id).at(-1);
      if (botsLast) fake.userSays({ from: person, channelId, content: '', voice: true, files: [voice], replyTo: botsLast.id });
      else fake.userSays({ from: person, channelId, content: '', mentionBot: true, files: [voice] });
    },
    holdDownloads() {
      return fake.holdDownloads();
    },
    dispose: () => fake.stop(),
  };
}
