import { freePort } from '../support/ports';
import { startProsody, type RunningProsody } from '../support/prosody';
import { XmppRelay } from '../support/xmpp-relay';
import { XmppUser, type ReceivedMessage } from '../support/xmpp-user';
import type { BotLine, KillRecord } from './analyze';
import { isMidReply, outage, pollUntil, type ChaosPlatform } from './platform';

const BOT = 'homing';
const BOT_PASSWORD = 'homing-chaos-pw';
const OBSERVER = 'watcher';
/** A request counts as handed to Homing when it reached the bot's socket this long before the connection ended. */
const HANDED_MARGIN_MS = 1_000;
/** A request's body: `req-0001`, `homing: req-0001 long 12`; never the bot's own `req-0001 line 1/1`. */
const REQUEST = /\breq-\d+\b(?! line \d)/;

/**
 * The chaos run on XMPP: a real prosody on loopback (its own, started here),
 * the gateway's XMPP adapter through a relay that sees what the server hands
 * the bot, people with plain clients writing in one room (addressing the bot
 * by nick) and one to one, and an observer in the room. A server restart
 * closes the relay's port first and opens it once the people are back in the
 * room, so the bot's room messages always have someone to see them.
 */
export async function startXmppPlatform(users: readonly string[], register: (dispose: () => Promise<void>) => void): Promise<ChaosPlatform> {
  let prosody: RunningProsody | undefined;
  let relay: XmppRelay | undefined;
  const people = new Map<string, XmppUser>();
  let observer: XmppUser | undefined;
  const dispose = async () => {
    await Promise.all([...people.values(), ...(observer ? [observer] : [])].map((user) => user.stop()));
    await relay?.dispose();
    await prosody?.dispose();
  };
  register(dispose);
  const passwords: Record<string, string> = { [BOT]: BOT_PASSWORD, [OBSERVER]: `${OBSERVER}-pw` };
  for (const name of users) passwords[name] = `${name}-pw`;
  const server = (prosody = await startProsody({ users: passwords, hibernationSeconds: 30 }));
  const room = `chaos@${server.mucDomain}`;
  const bare = `${BOT}@${server.domain}`;
  const liveRelay = (relay = new XmppRelay(await freePort(), () => server.port));
  await liveRelay.open();

  const watcher = (observer = new XmppUser(OBSERVER, passwords[OBSERVER]!, server.port));
  for (const name of users) people.set(name, new XmppUser(name, passwords[name]!, server.port));
  const everyone = [watcher, ...people.values()];
  await Promise.all(everyone.map((user) => user.start()));
  await Promise.all(everyone.map((user) => user.join(room)));

  const isBot = (from: string) => from.startsWith(`${room}/${BOT}`) || from === bare || from.startsWith(`${bare}/`);
  const linesOf = (user: XmppUser, conversation: 'room' | 'direct', written: ReadonlyMap<string, number>): BotLine[] =>
    asShown(user.received, written, server.domain)
      .filter((message) => message.body !== null && isBot(message.from) && (conversation === 'room' ? message.type === 'groupchat' : message.type !== 'groupchat'))
      .flatMap((message) => message.body!.split('\n').map((text) => ({ at: message.at, text })));

  return {
    platformsConfig: {
      xmpp: {
        jid: bare,
        host: '127.0.0.1',
        port: liveRelay.port,
        security: 'none',
        passwordEnv: 'XMPP_PASSWORD',
        dmPolicy: 'allowlist',
        allowFrom: users.map((name) => `${name}@${server.domain}`),
        rooms: { [room]: {} },
        // Long replies (11–18 lines of 350 bytes) go as several messages.
        maxMessageBytes: 2_000,
      },
    },
    env: { XMPP_PASSWORD: BOT_PASSWORD },
    users,
    group: room,
    whenBotReady: (timeoutMs) =>
      pollUntil(() => [...watcher.occupants].some((occupant) => occupant.startsWith(`${room}/${BOT}`)), timeoutMs, `the bot did not join ${room} in ${timeoutMs / 1000} s`),
    send(user, inGroup, text) {
      const person = people.get(user)!;
      if (!person.isOnline || (inGroup && !person.isIn(room))) return false;
      void (inGroup ? person.sayInRoom(room, `${BOT}: ${text}`) : person.say(bare, text)).catch(() => undefined);
      return true;
    },
    async restartServer(random) {
      // The bot's port refuses first, so our people are back in the room before the bot.
      await liveRelay.close();
      await server.stop();
      await outage(random);
      await server.start();
      await Promise.all(everyone.map((user) => user.restart()));
      await liveRelay.open();
    },
    lastMidReplyAt() {
      let last = 0;
      for (const user of everyone) {
        for (const message of user.received) {
          if (message.body === null || !isBot(message.from) || message.at <= last) continue;
          if (message.body.split('\n').some(isMidReply)) last = message.at;
        }
      }
      return last;
    },
    streams() {
      const written = timesWritten(liveRelay.sent);
      const map = new Map<string, BotLine[]>([[room, linesOf(watcher, 'room', written)]]);
      for (const [name, user] of people) map.set(name, linesOf(user, 'direct', written));
      return map;
    },
    handed(kills: readonly KillRecord[]) {
      const handed = new Map<string, number>();
      const handedOrder = new Map<string, number>();
      const senders = new Set(users.flatMap((name) => [`${name}@${server.domain}`, `${room}/${name}`]));
      for (const entry of liveRelay.handed) {
        const sender = entry.type === 'groupchat' ? entry.from : entry.from.split('/')[0]!;
        if (!senders.has(sender)) continue;
        const id = REQUEST.exec(entry.body)?.[0];
        if (!id) continue;
        if (!handedOrder.has(id)) handedOrder.set(id, handedOrder.size);
        // A connection that ended with a kill: its last stanzas may have sat unread in the dead process's socket.
        const closed = liveRelay.closedAt.get(entry.connection) ?? Number.POSITIVE_INFINITY;
        const killed = kills.some((kill) => kill.at <= closed && closed <= kill.at + HANDED_MARGIN_MS);
        if ((!killed || closed - entry.at >= HANDED_MARGIN_MS) && !handed.has(id)) handed.set(id, entry.at);
      }
      return { handed, handedOrder };
    },
    observerGaps() {
      // Room messages the bot wrote while the observer was out of the room could not be observed.
      let missed = 0;
      for (const entry of liveRelay.sent) {
        if (entry.type !== 'groupchat') continue;
        if (watcher.gaps.some((gap) => gap.from <= entry.at && entry.at <= (gap.to ?? Number.POSITIVE_INFINITY))) missed++;
      }
      return missed;
    },
    dispose,
  };
}

/**
 * A person's messages as their client shows them. Prosody hands a person a message a second time
 * when the server stopped before their client acknowledged it: at shutdown mod_smacks gives each
 * unacknowledged message of a user's last session to the offline store ("server-stopping" →
 * handle_unacked_stanzas → "delivery/failure" → "message/offline/handle"; mod_offline is always
 * loaded), and mod_offline sends it at the next login with a `<delay from="<server>">` (prosody
 * 0.12.3: core/modulemanager.lua autoload_modules, modules/mod_smacks.lua, modules/mod_offline.lua).
 * The person's client had it already and drops the copy by its id, as XEP-0359 ids are for. So does
 * this, and only for such a copy: one with the server's delay, of a stanza (id and body) the person
 * already holds as many times as the gateway wrote it (`written`, seen by the relay). A stanza the
 * gateway wrote again is counted again, delayed or not.
 */
export function asShown(received: readonly ReceivedMessage[], written: ReadonlyMap<string, number>, server: string): ReceivedMessage[] {
  const held = new Map<string, number>();
  return received.filter((message) => {
    if (message.body === null || message.id === undefined) return true;
    const key = stanzaKey(message.id, message.body);
    const copies = held.get(key) ?? 0;
    if (message.delayFrom === server && copies > 0 && copies >= (written.get(key) ?? 0)) return false;
    held.set(key, copies + 1);
    return true;
  });
}

/** How many times the gateway wrote each stanza (id and body), from what the relay saw it write. */
export function timesWritten(sent: readonly { readonly id: string; readonly body: string }[]): Map<string, number> {
  const written = new Map<string, number>();
  for (const { id, body } of sent) written.set(stanzaKey(id, body), (written.get(stanzaKey(id, body)) ?? 0) + 1);
  return written;
}

function stanzaKey(id: string, body: string): string {
  return `${id}\n${body}`;
}
