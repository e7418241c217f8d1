import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectApi, platformConnected, type ApiSocket } from './support/api-socket';
import { FakeDiscord, type FakeDiscordUser } from './support/fake-discord';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { waitUntil } from './support/wait';

/**
 * A hostile Discord Gateway against the real headless gateway process
 * (`bin/homing.js gateway`, discord.js unchanged): frames no Discord sends —
 * garbage, dispatches without data or with the wrong shapes, a 2 MB frame,
 * floods of opcodes, INVALID_SESSION and RECONNECT in a row. The process must
 * live, reconnect with backoff, and answer the next message once.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));

describe('the headless gateway against a hostile Discord Gateway', () => {
  let fake: FakeDiscord;
  let alice: FakeDiscordUser;
  let dataDir: string;
  let gateway: RunningGateway | undefined;
  let api: ApiSocket | undefined;

  beforeEach(async () => {
    fake = new FakeDiscord();
    await fake.start();
    alice = fake.addUser('alice');
    dataDir = mkdtempSync(join(tmpdir(), 'homing-discord-hostile-'));
  });

  afterEach(async () => {
    api?.close();
    await gateway?.kill();
    await fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const botTexts = (channelId: string) => fake.messages(channelId).filter((m) => m.author.id === fake.bot.id).map((m) => m.content);

  it('lives through garbage, broken dispatches, a 2 MB frame, opcode floods and invalid sessions, and answers the next message once', async () => {
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT] },
        platforms: { discord: { apiUrl: fake.apiUrl, tokenEnv: 'DISCORD_TOKEN', allowFrom: [alice.id] } },
        delivery: { leaseSeconds: 2 },
      }),
    );
    gateway = await startHeadlessGateway(['--data-dir', dataDir], { DISCORD_TOKEN: fake.token });
    api = await connectApi(gateway);
    const socket = api;
    const connected = () => platformConnected(socket, 'discord');
    await waitUntil('discord connected', connected, 30_000);
    const dm = fake.dmChannel(alice);
    fake.userSays({ from: alice, channelId: dm.id, content: 'before the storm' });
    await waitUntil('the first reply', () => botTexts(dm.id).length === 1, 20_000);
    const identifiesBefore = fake.gatewayLog.filter((entry) => entry.op === 'identify').length;

    const garbage = ['not json at all', '{"op":', '[]', 'null', '42', '{"op":"x"}', '{}', '{"op":0}', '{"op":0,"t":"MESSAGE_CREATE","s":90001,"d":null}'];
    const broken = [
      '{"op":0,"t":"MESSAGE_CREATE","s":90002,"d":{"id":5,"channel_id":null,"author":"x","content":{"a":1}}}',
      `{"op":0,"t":"MESSAGE_CREATE","s":90003,"d":{"id":"1","channel_id":"${dm.id}","author":{"id":null},"content":"forged"}}`,
      '{"op":0,"t":"GUILD_CREATE","s":90004,"d":{"id":"x","channels":"not a list","members":[null]}}',
      '{"op":0,"t":"UNKNOWN_EVENT","s":90005,"d":{"x":1}}',
      `{"op":0,"t":"TYPING_START","s":90006,"d":{"pad":"${'y'.repeat(2 << 20)}"}}`,
    ];
    const floods = [...Array.from({ length: 2_000 }, () => '{"op":11,"d":null}'), ...Array.from({ length: 200 }, () => '{"op":1,"d":null}'), '{"op":7,"d":null}'];
    const invalid = Array.from({ length: 3 }, () => '{"op":9,"d":false}');
    expect(fake.sendRawFrames([...garbage, ...broken, ...floods, ...invalid])).toBeGreaterThan(0);

    await waitUntil('connected again', async () => fake.connectedSessions === 1 && (await connected()), 60_000);
    fake.userSays({ from: alice, channelId: dm.id, content: 'after the storm' });
    await waitUntil('the reply after the storm', () => botTexts(dm.id).length >= 2, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(botTexts(dm.id)).toEqual(['You said: before the storm', 'You said: after the storm']);
    expect(gateway.child.exitCode, gateway.output()).toBeNull();
    expect(await api.call('getStatus')).toMatchObject({ state: 'running' });
    // Reconnected with backoff, not in a loop; what it skipped it said.
    expect(fake.gatewayLog.filter((entry) => entry.op === 'identify').length - identifiesBefore).toBeLessThanOrEqual(5);
    expect(gateway.output()).toMatch(/discord: skipped a Gateway event (without data|discord\.js could not handle)/);
  }, 150_000);
});
