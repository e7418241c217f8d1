import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiResults, MethodName } from '../src/shared/api';
import { startGatewayHarness, type GatewayHarness } from './support/gateway-harness';
import { connectIrcUser, linesFrom, type IrcUser } from './support/irc-user';
import { FAST_IRC, startNgircd, type RunningNgircd } from './support/ngircd';
import { waitUntil } from './support/wait';

/**
 * Pairing offered on IRC (`pairing: true`): the gateway in this process on a
 * real ngircd, real IRC clients as a stranger who asks and one who is denied.
 */

const BOT = 'homing';

describe('pairing on IRC (real ngircd)', () => {
  let server: RunningNgircd;
  let harness: GatewayHarness | undefined;
  const users: IrcUser[] = [];

  beforeEach(async () => {
    server = await startNgircd();
  });

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    for (const user of users.splice(0)) await user.quit();
    await server.dispose();
  });

  async function call<M extends MethodName>(method: M, params?: unknown): Promise<ApiResults[M]> {
    const result = await harness!.gateway.api.dispatch(method, params);
    if (!result.ok) throw new Error(`${method}: ${result.error.message}`);
    return result.value as ApiResults[M];
  }

  it('sends a stranger a pairing code instead of a refusal, answers them once approved, and never a denied one', async () => {
    harness = await startGatewayHarness(
      {
        agent: { type: 'builtin' },
        platforms: { irc: { host: server.host, port: server.port, tls: false, nick: BOT, channels: [], allow: [], pairing: true } },
      },
      { tuning: { irc: FAST_IRC } },
    );
    await harness.waitFor('platform.state', (event) => event.platform.name === 'irc' && event.platform.state === 'connected');
    const carol = await connectIrcUser(server, 'carol');
    const mallory = await connectIrcUser(server, 'mallory');
    users.push(carol, mallory);

    carol.client.say(BOT, 'hello?');
    mallory.client.say(BOT, 'let me in');
    await waitUntil('two codes', () => carol.notices.length === 1 && mallory.notices.length === 1);
    const requests = (await call('listPairing')).requests;
    expect(requests.map((request) => request.name).sort()).toEqual(['carol', 'mallory']);
    const code = (name: string) => requests.find((request) => request.name === name)!.code;
    expect(carol.notices[0]!.message).toContain(code('carol'));
    expect(harness.events.filter((event) => event.type === 'turn.started')).toHaveLength(0);

    await call('decidePairing', { code: code('carol'), decision: 'approve' });
    await call('decidePairing', { code: code('mallory'), decision: 'deny' });
    await waitUntil('the approval notice', () => carol.notices.length === 2);
    carol.client.say(BOT, 'now?');
    mallory.client.say(BOT, 'and me?');
    await waitUntil('the answer to carol', () => linesFrom(carol, BOT).length > 0);
    await mallory.roundTrip();
    expect(linesFrom(mallory, BOT)).toEqual([]);
    expect(mallory.notices).toHaveLength(1);
    expect(harness.events.filter((event) => event.type === 'turn.started')).toHaveLength(1);
  });

  it('keeps a code the budget held back owed across a restart, and tells it once the new gateway connects', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'homing-pairing-restart-'));
    const config = { agent: { type: 'builtin' }, platforms: { irc: { host: server.host, port: server.port, tls: false, nick: BOT, channels: [], allow: [], pairing: true } } };
    // One courtesy line an hour: the second stranger's code cannot go out before the restart.
    const tuning = { irc: { ...FAST_IRC, courtesy: { perSenderMs: 60_000, overall: 1, windowMs: 60 * 60 * 1000 } } };
    try {
      harness = await startGatewayHarness(config, { dataDir, tuning });
      await harness.waitFor('platform.state', (event) => event.platform.name === 'irc' && event.platform.state === 'connected');
      const carol = await connectIrcUser(server, 'carol');
      const dave = await connectIrcUser(server, 'dave');
      users.push(carol, dave);
      carol.client.say(BOT, 'hello?');
      await waitUntil('carol\'s code', () => carol.notices.length === 1);
      dave.client.say(BOT, 'me too');
      await waitUntil('dave\'s request', async () => (await call('listPairing')).requests.length === 2);
      await dave.roundTrip();
      expect(dave.notices).toEqual([]);
      const daveCode = (await call('listPairing')).requests.find((request) => request.name === 'dave')!;
      expect(daveCode.told).toBe(false);
      await harness.close();

      harness = await startGatewayHarness(null, { dataDir, tuning });
      await waitUntil('dave\'s code after the restart', () => dave.notices.length === 1, 15_000);
      expect(dave.notices[0]!.message).toContain(daveCode.code);
      expect((await call('listPairing')).requests.every((request) => request.told)).toBe(true);
      expect(carol.notices).toHaveLength(1);
      expect(harness.events.filter((event) => event.type === 'turn.started')).toHaveLength(0);
    } finally {
      await harness?.close();
      harness = undefined;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
