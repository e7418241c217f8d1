import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeliveryPage, PlatformStatus } from '../src/shared/api';
import { connectApi, type ApiSocket } from './support/api-socket';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { MUC_DOMAIN, NO_ARCHIVE_MUC_DOMAIN } from './support/prosody';
import { waitUntil } from './support/wait';
import type { XmppRelay } from './support/xmpp-relay';
import type { XmppUser } from './support/xmpp-user';
import { useXmppWorld, XMPP_PASSWORDS } from './support/xmpp-world';

/**
 * What the XMPP adapter takes in from rooms when the link blips or the gateway
 * dies: the real headless gateway (`homing gateway`, built by `npm run build`)
 * on a real prosody 0.12 whose rooms keep an archive (mod_muc_mam,
 * test/fixtures/prosody.cfg.lua), through a relay that can cut the link.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));
const HOMING = 'homing@localhost';

describe('the headless gateway in XMPP rooms, across a blip and a kill', () => {
  // Hibernation long enough to resume after the blip; a killed session's is cut short by the restart's login.
  const world = useXmppWorld({ hibernationSeconds: 30 });
  let relay: XmppRelay;
  let dataDir: string;
  let alice: XmppUser;
  let room: string;
  let roomSeq = 0;
  const gateways: RunningGateway[] = [];
  const sockets: ApiSocket[] = [];

  beforeEach(() => {
    ({ relay, alice } = world);
    dataDir = mkdtempSync(join(tmpdir(), 'homing-xmpp-intake-'));
    room = `intake${++roomSeq}@${MUC_DOMAIN}`;
  });

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    for (const gateway of gateways.splice(0)) await gateway.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function configure(rooms: string[]): void {
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT] },
        platforms: {
          xmpp: {
            jid: HOMING,
            host: '127.0.0.1',
            port: relay.port,
            security: 'none',
            passwordEnv: 'XMPP_PASSWORD',
            allowFrom: ['alice@localhost'],
            rooms: Object.fromEntries(rooms.map((name) => [name, {}])),
          },
        },
        delivery: { leaseSeconds: 2 },
      }),
    );
  }

  async function start(env: NodeJS.ProcessEnv = {}): Promise<{ gateway: RunningGateway; api: ApiSocket }> {
    const gateway = await startHeadlessGateway(['--data-dir', dataDir], { XMPP_PASSWORD: XMPP_PASSWORDS.homing, ...env });
    gateways.push(gateway);
    const api = await connectApi(gateway);
    sockets.push(api);
    return { gateway, api };
  }

  async function crash(gateway: RunningGateway): Promise<void> {
    await gateway.kill();
    gateways.splice(gateways.indexOf(gateway), 1);
    expect(gateway.child.signalCode).toBe('SIGKILL');
  }

  /** The gateway's nick is in the room, as alice sees it (a fresh presence after each join). */
  async function inRoom(where = room): Promise<void> {
    await waitUntil(`homing in ${where}`, () => alice.occupants.has(`${where}/homing`), 20_000);
  }

  function positionsFile(): string | undefined {
    const name = readdirSync(dataDir).includes('xmpp') ? readdirSync(join(dataDir, 'xmpp')).find((entry) => /^account-\w+\.json$/.test(entry)) : undefined;
    return name === undefined ? undefined : join(dataDir, 'xmpp', name);
  }

  function readPositions(): { rooms: Record<string, { last?: string; at: number }> } {
    return JSON.parse(readFileSync(positionsFile()!, 'utf8')) as { rooms: Record<string, { last?: string; at: number }> };
  }

  /** Every reply is confirmed by the server (so a kill now leaves none to resend). */
  async function allDelivered(api: ApiSocket): Promise<void> {
    await waitUntil('every reply delivered', async () => (await api.call<DeliveryPage>('listDeliveries', {})).deliveries.every((row) => row.state === 'delivered'), 10_000);
  }

  const repliesIn = (where: string) => alice.bodiesFrom(where).filter((message) => message.from === `${where}/homing`).map((message) => message.body);
  const xmppCard = async (api: ApiSocket) => (await api.call<PlatformStatus[]>('listPlatforms')).find((platform) => platform.name === 'xmpp');

  it('answers a room message that was in flight when the link blipped: prosody re-sends it on resume with a <delay> from our own JID, which is not history', async () => {
    configure([room]);
    await alice.join(room);
    const { gateway } = await start();
    await inRoom();
    // The link goes quiet: what prosody writes to the gateway now is lost on the way.
    relay.hold();
    await alice.sayInRoom(room, 'homing: said during the blip');
    // The room reflects alice's message to her in the same pass as to the gateway: it is on the dead link.
    await waitUntil('the room broadcast it', () => alice.bodiesFrom(room).some((message) => message.body === 'homing: said during the blip'), 5_000);
    relay.dropConnections();
    relay.release();
    await waitUntil('the reply in the room', () => repliesIn(room).length === 1, 20_000);
    // It came back on the resumed stream, stamped by mod_smacks with our bare JID, not the room's.
    // (The room's archive may hand it too, as a result from the room's bare JID, if a first read of it was in flight then.)
    const handed = relay.handed.filter((entry) => entry.body === 'homing: said during the blip' && entry.type === 'groupchat');
    expect(handed, JSON.stringify(relay.handed)).toEqual([expect.objectContaining({ connection: 2, delayFrom: HOMING })]);
    expect(gateway.output()).toMatch(/stream resumed/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(repliesIn(room)).toEqual(['You said: said during the blip']);
  });

  it('answers room messages sent while it was killed from the room\u2019s archive, page after page, each once, and not what was said before it first came', async () => {
    await alice.join(room);
    await alice.sayInRoom(room, 'homing: said before Homing ever came');
    configure([room]);
    const first = await start();
    await inRoom();
    await alice.sayInRoom(room, 'homing: live');
    await waitUntil('the live reply', () => repliesIn(room).length === 1, 20_000);
    await allDelivered(first.api);
    await crash(first.gateway);
    // More than one page of the archive (prosody answers at most 50 per query), addressed and not.
    const said: string[] = [];
    for (let i = 0; i < 44; i++) {
      const text = `away ${i}`;
      said.push(text);
      await alice.sayInRoom(room, `homing: ${text}`);
      if (i % 4 === 0) await alice.sayInRoom(room, `just talk ${i}`);
    }
    await waitUntil('the room has them all', () => alice.bodiesFrom(room).some((message) => message.body === 'homing: away 43'), 10_000);
    await start();
    await waitUntil('every message answered', () => repliesIn(room).length === 45, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(repliesIn(room)).toEqual(['You said: live', ...said.map((text) => `You said: ${text}`)]);
  }, 60_000);

  it('killed with the archive\u2019s first message handed but not saved, keeps its position and answers every message after the restart, each once', async () => {
    await alice.join(room);
    configure([room]);
    const first = await start();
    await inRoom();
    await alice.sayInRoom(room, 'homing: first');
    await waitUntil('the live reply', () => repliesIn(room).length === 1, 20_000);
    await allDelivered(first.api);
    await crash(first.gateway);
    const before = readPositions().rooms[room];
    expect(before?.last).toMatch(/\S/);
    const said = Array.from({ length: 12 }, (_, i) => `held ${i}`);
    for (const text of said) await alice.sayInRoom(room, `homing: ${text}`);
    await waitUntil('the room has them all', () => alice.bodiesFrom(room).some((message) => message.body === 'homing: held 11'), 10_000);
    // The next run reads the archive, and its intake holds the first message before saving it: killed there.
    const hold = join(dataDir, 'hold');
    writeFileSync(hold, '');
    const second = await start({ HOMING_TEST_HOLD_INTAKE: hold });
    await waitUntil('a message held before its save', () => readdirSync(dataDir).includes('hold.held'), 20_000);
    await crash(second.gateway);
    expect(readPositions().rooms[room], 'the position did not pass a message not saved').toEqual(before);
    rmSync(hold);
    await start();
    await waitUntil('every message answered', () => repliesIn(room).length >= said.length + 1, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(repliesIn(room)).toEqual(['You said: first', ...said.map((text) => `You said: ${text}`)]);
  });

  it('reads the archive all the same when the link dies as its query leaves', async () => {
    await alice.join(room);
    configure([room]);
    const first = await start();
    await inRoom();
    await alice.sayInRoom(room, 'homing: first');
    await waitUntil('the live reply', () => repliesIn(room).length === 1, 20_000);
    await allDelivered(first.api);
    await crash(first.gateway);
    for (const text of ['one', 'two', 'three']) await alice.sayInRoom(room, `homing: ${text}`);
    // The server never sees the query; the gateway resumes the stream (or logs in again) and must still read.
    relay.dropConnectionsWhenSent(/<query\b[^>]*xmlns=["']urn:xmpp:mam:2["']/);
    const second = await start();
    await waitUntil('every message answered', () => repliesIn(room).length === 4, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(repliesIn(room)).toEqual(['You said: first', 'You said: one', 'You said: two', 'You said: three']);
    // The link did die during the read.
    expect(relay.closedAt.size).toBeGreaterThanOrEqual(2);
    expect(second.gateway.output()).toMatch(/lost the connection/);
  });

  it('says once that a room without an archive lost what was sent there while Homing was away', async () => {
    const bare = `plain${roomSeq}@${NO_ARCHIVE_MUC_DOMAIN}`;
    await alice.join(bare);
    configure([bare]);
    const first = await start();
    await inRoom(bare);
    // The first stay is no absence: nothing to say.
    await alice.sayInRoom(bare, 'homing: hello');
    await waitUntil('the live reply', () => repliesIn(bare).length === 1, 20_000);
    await allDelivered(first.api);
    expect((await xmppCard(first.api))?.notice).toBeUndefined();
    await crash(first.gateway);
    await alice.sayInRoom(bare, 'homing: while away, into the void');
    const second = await start();
    await inRoom(bare);
    await waitUntil('the notice on the card', async () => (await xmppCard(second.api))?.notice !== undefined, 20_000);
    expect((await xmppCard(second.api))?.notice?.text).toBe(`${bare} keeps no archive: messages sent there while Homing was away are lost.`);
    await alice.sayInRoom(bare, 'homing: back');
    await waitUntil('the reply after the restart', () => repliesIn(bare).length === 2, 20_000);
    expect(second.gateway.output().match(/keeps no archive/g)).toHaveLength(1);
    expect(repliesIn(bare)).toEqual(['You said: hello', 'You said: back']);
  });

  it('when the archive no longer knows its position, says so once and reads from the time of the last message it took', async () => {
    await alice.join(room);
    configure([room]);
    const first = await start();
    await inRoom();
    await alice.sayInRoom(room, 'homing: before');
    await waitUntil('the live reply', () => repliesIn(room).length === 1, 20_000);
    await allDelivered(first.api);
    await crash(first.gateway);
    // As if the archive had expired that message (muc_log_expires_after): its stanza-id is unknown now.
    const state = readPositions();
    expect(state.rooms[room]?.last).toMatch(/\S/);
    state.rooms[room]!.last = 'expired-long-ago';
    writeFileSync(positionsFile()!, JSON.stringify({ v: 1, ...state }));
    await alice.sayInRoom(room, 'homing: after the archive forgot');
    const second = await start();
    await waitUntil('the reply from the archive', () => repliesIn(room).length === 2, 20_000);
    const card = await xmppCard(second.api);
    expect(card?.notice?.text).toMatch(new RegExp(`^${room.replace(/\./g, '\\.')}: the room.s archive no longer has the last message Homing read`));
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The message before it lies in the window read by time: recognised, not answered again.
    expect(repliesIn(room)).toEqual(['You said: before', 'You said: after the archive forgot']);
    expect(second.gateway.output().match(/no longer has the last message/g)).toHaveLength(1);
  });
});
