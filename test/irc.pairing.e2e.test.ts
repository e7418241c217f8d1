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
});
