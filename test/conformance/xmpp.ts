import { xml, type Client } from '@xmpp/client';
import { HttpFileServer } from '../support/http-file-server';
import { freePort } from '../support/ports';
import { startProsody } from '../support/prosody';
import { waitUntil } from '../support/wait';
import { XmppRelay } from '../support/xmpp-relay';
import { XmppUser } from '../support/xmpp-user';
import type { ConformanceFile, ConformanceWorld, Where } from './world';

const BOT = 'homing';
const PERSON = 'ada';
const PASSWORDS = { [BOT]: 'homing-conformance-pw', [PERSON]: 'ada-conformance-pw' } as const;
/** More room messages than one page of the archive: prosody answers at most 50 per query (mod_muc_mam `max_archive_query_results`). */
const FLOOD_ADDRESSED = 50;
/** One message in this many of the flood is room talk not addressed to the bot (it fills the archive's pages too). */
const FLOOD_CHATTER_EVERY = 6;

/**
 * The conformance row for XMPP: a real prosody 0.12 from Debian on loopback
 * (test/fixtures/prosody.cfg.lua: stream management, offline storage, a MUC
 * whose rooms keep an archive with mod_muc_mam), one person who may talk to
 * the bot one to one and who is in the bot's room, and a relay between the
 * gateway and the server that can cut the link.
 *
 * While Homing is down the server stores the person's direct messages offline
 * (prosody mod_offline; mod_smacks moves a dead session's unacknowledged chat
 * messages there too) and bounces room messages to the dead session, which the
 * room's archive keeps: Homing reads it after its last stanza-id, page by page.
 * So the service keeps both kinds of message while Homing is down, and the
 * room's catch-up pages (`flood`). The server deduplicates nothing, and
 * addressing is by the message alone (`homing: …`): no `dedup`, no `remembers`.
 *
 * Files go as Conversations sends them: the client uploads the file (XEP-0363;
 * here to a file server on loopback standing in for the upload service, whose
 * downloads `holdDownloads` can hang) and sends its GET URL as the body with
 * XEP-0066 Out of Band Data. XMPP has no captions: a caption goes right before,
 * as a message of its own. In the room a message is addressed by its text, so
 * the file's body is `homing: <url>` there.
 */
export async function startXmppWorld(): Promise<ConformanceWorld> {
  const server = await startProsody({ users: PASSWORDS, hibernationSeconds: 30 });
  const room = `conformance@${server.mucDomain}`;
  const bot = `${BOT}@${server.domain}`;
  const relay = new XmppRelay(await freePort(), () => server.port);
  const person = new XmppUser(PERSON, PASSWORDS[PERSON], server.port);
  const uploads = new HttpFileServer();
  let fileCount = 0;
  try {
    await uploads.start();
    await relay.open();
    await person.start();
    await person.join(room);
  } catch (error) {
    await person.stop();
    await uploads.stop();
    await relay.dispose();
    await server.dispose();
    throw error;
  }
  /** The bot's presences in the room already waited for: each start of the gateway joins (and shows) once more. */
  let joinsSeen = 0;
  const botJoins = () => person.presences.filter((presence) => presence.from.startsWith(`${room}/${BOT}`));

  return {
    platform: 'xmpp',
    platformsConfig: {
      xmpp: {
        jid: bot,
        host: '127.0.0.1',
        port: relay.port,
        security: 'none',
        passwordEnv: 'XMPP_PASSWORD',
        allowFrom: [person.jid],
        rooms: { [room]: {} },
        // The person's upload service is a loopback http server here (test/support/http-file-server.ts).
        allowHttpFiles: true,
      },
    },
    env: { XMPP_PASSWORD: PASSWORDS[BOT] },
    keepsWhileDown: true,
    places: ['group', 'direct'],
    async whenBotReady(timeoutMs) {
      // The bot is in the room once it joined it again: its archive read starts with that join.
      await waitUntil('the bot joined the room', () => botJoins().length > joinsSeen, timeoutMs);
      joinsSeen = botJoins().length;
    },
    async say(text, where) {
      if (where === 'group') await person.sayInRoom(room, `${BOT}: ${text}`);
      else await person.say(bot, text);
      // Handled by the server (routed, stored offline, or archived by the room) once it answers a later ping.
      await person.roundTrip();
    },
    async replies(where: Where) {
      await person.roundTrip();
      return person.received
        .filter((message) => message.body !== null && (where === 'group' ? message.type === 'groupchat' && message.from.startsWith(`${room}/${BOT}`) : message.type !== 'groupchat' && message.from.split('/')[0] === bot))
        .map((message) => message.body!);
    },
    async flood() {
      const addressed: string[] = [];
      for (let i = 0; i < FLOOD_ADDRESSED; i++) {
        const text = `flood ${i}`;
        addressed.push(text);
        await person.sayInRoom(room, `${BOT}: ${text}`);
        if (i % FLOOD_CHATTER_EVERY === 0) await person.sayInRoom(room, `just talking ${i}`);
      }
      await person.roundTrip();
      return addressed;
    },
    failNextCatchUp() {
      // The link dies as the bot's next archive query leaves: the server never sees it. The bot
      // resumes the stream (or logs in again) and must read the archive all the same.
      relay.dropConnectionsWhenSent(/<query\b[^>]*xmlns=["']urn:xmpp:mam:2["']/);
    },
    async sendFile(file: ConformanceFile, where: Where) {
      if (file.caption !== undefined) {
        if (where === 'group') await person.sayInRoom(room, `${BOT}: ${file.caption}`);
        else await person.say(bot, file.caption);
      }
      const url = uploads.put(file.name, file.bytes, file.mime);
      const to = where === 'group' ? room : bot;
      const body = where === 'group' ? `${BOT}: ${url}` : url;
      // XmppUser sends only text; its client sends the stanza (the same session, so the room knows the sender).
      const client = (person as unknown as { xmpp: Client }).xmpp;
      await client.send(xml('message', { to, type: where === 'group' ? 'groupchat' : 'chat', id: `file-${++fileCount}-${Date.now().toString(36)}` }, xml('body', {}, body), xml('x', { xmlns: 'jabber:x:oob' }, xml('url', {}, url))));
      await person.roundTrip();
    },
    holdDownloads() {
      return uploads.holdDownloads();
    },
    async dispose() {
      await person.stop();
      await uploads.stop();
      await relay.dispose();
      await server.dispose();
    },
  };
}
