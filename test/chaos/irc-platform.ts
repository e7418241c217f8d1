import { startNgircd, type RunningNgircd } from '../support/ngircd';
import { freePort } from '../support/ports';
import type { BotLine, KillRecord } from './analyze';
import { BotProxy } from './bot-proxy';
import { ChaosIrcClient } from './irc-client';
import type { IrcLine } from './irc-line';
import { isMidReply, outage, pollUntil, requestIn, type ChaosPlatform } from './platform';

const BOT = 'homing';
const CHANNEL = '#chaos';
const OBSERVER = 'watcher';
/** A request counts as handed to Homing when its line reached the bot's socket this long before the connection ended. */
const HANDED_MARGIN_MS = 1_000;

/**
 * The chaos run on IRC: a real ngircd on loopback, the gateway's IRC adapter
 * through a byte relay that sees what the server hands the bot, plain IRC
 * users sending in the channel and by DM, and an observer in the channel.
 */
export async function startIrcPlatform(users: readonly string[], register: (dispose: () => Promise<void>) => void): Promise<ChaosPlatform> {
  const clients: ChaosIrcClient[] = [];
  let ngircd: RunningNgircd | undefined;
  let proxy: BotProxy | undefined;
  const dispose = async () => {
    await Promise.all(clients.map((client) => client.stop()));
    await Promise.all([proxy?.dispose(), ngircd?.dispose()]);
  };
  // Registered first, so a failure while starting still cleans up what did start.
  register(dispose);
  const liveServer = (ngircd = await startNgircd());
  const liveProxy = (proxy = new BotProxy(await freePort(), liveServer.port));
  await liveProxy.open();

  // Who is in the channel, seen by the observer; and the last moment a reply was mid-way.
  let botNick: string | undefined;
  let lastMidReplyAt = 0;
  const watchBot = (line: IrcLine) => {
    if (line.command === 'JOIN' && line.nick.startsWith(BOT) && (line.params[0] ?? '') === CHANNEL) botNick = line.nick;
    else if ((line.command === 'QUIT' || line.command === 'PART') && line.nick === botNick) botNick = undefined;
    else if (line.command === 'NICK' && line.nick === botNick) botNick = line.params[0];
  };
  const watchReplies = (line: IrcLine, at: number) => {
    if (line.command === 'PRIVMSG' && line.nick.startsWith(BOT) && isMidReply(line.params[1] ?? '')) lastMidReplyAt = at;
  };
  const observer = new ChaosIrcClient({
    host: '127.0.0.1',
    port: liveServer.port,
    nick: OBSERVER,
    channel: CHANNEL,
    onLine: (line, at) => {
      watchBot(line);
      watchReplies(line, at);
    },
  });
  const people = new Map(users.map((nick) => [nick, new ChaosIrcClient({ host: '127.0.0.1', port: liveServer.port, nick, channel: CHANNEL, onLine: watchReplies })]));
  clients.push(observer, ...people.values());
  for (const client of clients) client.start();
  await Promise.all(clients.map((client) => client.whenReady(15_000)));

  return {
    platformsConfig: { irc: { host: '127.0.0.1', port: liveProxy.port, tls: false, nick: BOT, channels: [CHANNEL], allow: [...users] } },
    env: {},
    users,
    group: CHANNEL,
    whenBotReady: (timeoutMs) => pollUntil(() => botNick !== undefined, timeoutMs, `the bot did not join ${CHANNEL} in ${timeoutMs / 1000} s`),
    send(user, inGroup, text) {
      const client = people.get(user)!;
      return inGroup ? client.say(CHANNEL, `${BOT}: ${text}`) : client.say(botNick ?? BOT, text);
    },
    async restartServer(random) {
      // The bot's port refuses first, so our people are back in the channel before the bot.
      await liveProxy.close();
      await liveServer.stop();
      await outage(random);
      await liveServer.start();
      await Promise.all(clients.map((client) => client.whenReady(15_000)));
      await liveProxy.open();
    },
    lastMidReplyAt: () => lastMidReplyAt,
    streams() {
      const map = new Map<string, BotLine[]>();
      const botLines = (client: ChaosIrcClient, target: string) =>
        client.received.filter((line) => line.from.startsWith(BOT) && line.target === target).map(({ at, text }) => ({ at, text }));
      map.set(CHANNEL, botLines(observer, CHANNEL));
      for (const [nick, client] of people) map.set(nick, botLines(client, nick));
      return map;
    },
    handed(kills: readonly KillRecord[]) {
      const handed = new Map<string, number>();
      const handedOrder = new Map<string, number>();
      const nicks = new Set(users);
      for (const { at, connection, line } of liveProxy.handed) {
        if (!nicks.has(line.nick)) continue;
        const id = requestIn(line.params[1] ?? '');
        if (!id) continue;
        if (!handedOrder.has(id)) handedOrder.set(id, handedOrder.size);
        // A connection that ended with a kill: the last lines may still have sat unread in
        // the dead process's socket. Any other end (a server restart) left the gateway running.
        const closed = liveProxy.closedAt.get(connection) ?? Number.POSITIVE_INFINITY;
        const killed = kills.some((kill) => kill.at <= closed && closed <= kill.at + HANDED_MARGIN_MS);
        if ((!killed || closed - at >= HANDED_MARGIN_MS) && !handed.has(id)) handed.set(id, at);
      }
      return { handed, handedOrder };
    },
    observerGaps() {
      // Bot lines written while the person meant to see them was out of the channel: those could not be observed.
      const byTarget = new Map<string, ChaosIrcClient>([[CHANNEL, observer], ...people]);
      let missed = 0;
      for (const { at, line } of liveProxy.botSent) {
        const client = byTarget.get(line.params[0] ?? '');
        if (client?.gaps.some((gap) => gap.from <= at && at <= (gap.to ?? Number.POSITIVE_INFINITY))) missed++;
      }
      return missed;
    },
    dispose,
  };
}
