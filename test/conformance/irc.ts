import { connectIrcUser, type IrcUser } from '../support/irc-user';
import { startNgircd } from '../support/ngircd';
import { waitUntil } from '../support/wait';
import type { ConformanceWorld, Where } from './world';

const BOT = 'homing';
const CHANNEL = '#conformance';
const PERSON = 'ada';

/**
 * The conformance row for IRC: a real ngircd on loopback and one person in the
 * bot's channel. IRC keeps nothing for a client that is not connected (RFC
 * 2812 has no offline storage or history; ngircd implements none), so its
 * intake is push-only and the suite leaves out the cases that need messages
 * kept while Homing is down.
 */
export async function startIrcWorld(): Promise<ConformanceWorld> {
  const server = await startNgircd({ maxNickLength: 30 });
  let person: IrcUser;
  try {
    person = await connectIrcUser(server, PERSON, [CHANNEL]);
  } catch (error) {
    await server.dispose();
    throw error;
  }
  /** The bot's nick now: the last one that joined the channel (it may be `homing_` while a killed one's ghost holds `homing`). */
  const botNick = (): string | undefined => person.joins.filter((join) => join.channel === CHANNEL && join.nick.startsWith(BOT)).at(-1)?.nick;
  const fromBot = (nick: string) => nick.startsWith(BOT);

  return {
    platform: 'irc',
    platformsConfig: { irc: { host: server.host, port: server.port, tls: false, nick: BOT, channels: [CHANNEL], allow: [PERSON] } },
    env: {},
    keepsWhileDown: false,
    places: ['direct', 'group'],
    async whenBotReady(timeoutMs) {
      const joinsBefore = person.joins.length;
      // A bot that is (re)started joins the channel anew: its join after this call, or one already there that is still in it.
      await waitUntil('the bot in the channel', () => person.joins.length > joinsBefore || (botNick() !== undefined && inChannel()), timeoutMs);
      await person.roundTrip();
    },
    async say(text, where) {
      const nick = botNick() ?? BOT;
      person.client.say(where === 'group' ? CHANNEL : nick, where === 'group' ? `${nick}: ${text}` : text);
      await person.roundTrip();
    },
    async replies(where: Where) {
      await person.roundTrip();
      return person.privmsgs.filter((event) => fromBot(event.nick) && event.target === (where === 'group' ? CHANNEL : PERSON)).map((event) => event.message);
    },
    async dispose() {
      await person.quit();
      await server.dispose();
    },
  };

  /** Whether the bot's last join is not followed by its quit (the person's raw lines say who left). */
  function inChannel(): boolean {
    const nick = botNick();
    if (!nick) return false;
    const lastJoin = person.rawLines.findLastIndex((line) => new RegExp(`^:${escape(nick)}!\\S+ JOIN :?${escape(CHANNEL)}$`, 'i').test(line));
    const lastQuit = person.rawLines.findLastIndex((line) => new RegExp(`^:${escape(nick)}!\\S+ (QUIT|PART)\\b`, 'i').test(line));
    return lastJoin > lastQuit;
  }
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
