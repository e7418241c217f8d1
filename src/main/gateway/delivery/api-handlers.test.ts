import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Gateway } from '../gateway';
import { claim, reply } from '../ledger/fixtures/test-ledger';
import { silentLogger } from '../logger';
import { freePort } from '../../../../test/support/ports';

let dataDir: string;
let gateway: Gateway;
beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'homing-delivery-api-'));
  gateway = Gateway.start({ dataDir, mode: 'headless', version: '0.0.0-test', logger: silentLogger, detectSleep: false, detectOllama: false });
  await gateway.ready;
});
afterEach(async () => {
  await gateway.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A reply owed to IRC, which this gateway has not configured: it stays owed. */
function owedToIrc(n: number, failure?: string): string {
  const { ledger } = gateway.deliveries;
  const id = ledger.recordObligation(reply(n, 'irc')).row.id;
  if (failure) {
    ledger.markFailed(claim(ledger, id).receipt, { error: failure, retryable: false, permanent: true });
    ledger.letGo(id);
  }
  return id;
}

describe('the delivery API of a running gateway', () => {
  it('lists the owed tab (a permanent failure is given up, not owed) with previews and a total, and filters by platform', async () => {
    const first = owedToIrc(1);
    const failed = owedToIrc(2, 'no such nick');
    const page = await gateway.api.dispatch('listDeliveries', { filter: 'owed', platform: 'irc' });
    expect(page).toMatchObject({ ok: true, value: { total: 1, hasMore: false } });
    const givenUp = await gateway.api.dispatch('listDeliveries', { filter: 'abandoned', platform: 'irc' });
    expect(givenUp.ok && (givenUp.value as { deliveries: { id: string }[] }).deliveries.map((row) => row.id)).toEqual([failed]);
    expect(page.ok && (page.value as { deliveries: { id: string; preview: string }[] }).deliveries.find((row) => row.id === first)?.preview).toBe(
      'reply 1 part 1',
    );
    expect(await gateway.api.dispatch('listDeliveries', { filter: 'owed', platform: 'local' })).toMatchObject({ ok: true, value: { total: 0 } });
    expect(await gateway.api.dispatch('listDeliveries', { filter: 'everything' })).toMatchObject({ ok: false, error: { code: 'bad-request' } });
  });

  it('getDeliveryText returns the whole reply, and not-found for an unknown id', async () => {
    const id = owedToIrc(3);
    expect(await gateway.api.dispatch('getDeliveryText', { id })).toEqual({ ok: true, value: { id, text: 'reply 3 part 1' } });
    expect(await gateway.api.dispatch('getDeliveryText', { id: 'f'.repeat(24) })).toMatchObject({ ok: false, error: { code: 'not-found' } });
  });

  it('getDeliveries returns the rows of known ids, for delivery ticks', async () => {
    const id = owedToIrc(6);
    expect(await gateway.api.dispatch('getDeliveries', { ids: [id, 'e'.repeat(24)] })).toMatchObject({ ok: true, value: [{ id, state: 'pending' }] });
  });

  it('retryDeliveries makes the failed rows of a platform owed again and says how many', async () => {
    const failed = owedToIrc(4, 'no such nick');
    owedToIrc(5, 'no such nick');
    expect(await gateway.api.dispatch('retryDeliveries', { platform: 'irc' })).toEqual({ ok: true, value: { retried: 2 } });
    expect(gateway.deliveries.ledger.getDelivery(failed)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(await gateway.api.dispatch('retryDeliveries', { platform: 'irc' })).toEqual({ ok: true, value: { retried: 0 } });
  });

  it("findSession finds a delivery's conversation by its session key", async () => {
    const source = { platform: 'irc', chatId: 'alice', chatType: 'direct' as const, senderId: 'alice', senderName: 'alice' };
    const { sessionId, sessionKey } = gateway.sessions.resolve(source);
    gateway.sessions.appendUserTurn(sessionId, { source, text: 'hi' });
    expect(await gateway.api.dispatch('findSession', { keyOrId: sessionKey })).toMatchObject({ ok: true, value: { sessionId } });
    expect(await gateway.api.dispatch('findSession', { keyOrId: 'agent:main:irc:direct:nobody' })).toMatchObject({
      ok: false,
      error: { code: 'not-found' },
    });
  });
});

describe('testConnection', () => {
  let silent: Server | undefined;
  afterEach(() => silent?.close());

  it('checks the settings with the config schema and names the field', async () => {
    expect(await gateway.api.dispatch('testConnection', { target: 'irc', config: { host: '127.0.0.1', nick: '1bad' } })).toMatchObject({
      ok: true,
      value: { ok: false, message: expect.stringMatching(/^platforms\.irc\.nick: must be an IRC nick/) },
    });
    expect(await gateway.api.dispatch('testConnection', { target: 'agent', config: { type: 'openai', baseUrl: 'nope', model: 'x' } })).toMatchObject({
      ok: true,
      value: { ok: false, message: expect.stringMatching(/^agent\.baseUrl:/) },
    });
  });

  it('says the built-in agent is ready, and that nothing answers on a closed port', async () => {
    expect(await gateway.api.dispatch('testConnection', { target: 'agent', config: { type: 'builtin' } })).toMatchObject({
      ok: true,
      value: { ok: true },
    });
    const closed = await freePort();
    const result = await gateway.api.dispatch('testConnection', {
      target: 'irc',
      config: { host: '127.0.0.1', port: closed, tls: false, nick: 'homing' },
    });
    expect(result).toMatchObject({ ok: true, value: { ok: false, message: expect.stringContaining(`127.0.0.1:${closed}`) } });
    const agent = await gateway.api.dispatch('testConnection', {
      target: 'agent',
      config: { type: 'openai', baseUrl: `http://127.0.0.1:${closed}/v1`, model: 'llama3.2' },
    });
    expect(agent).toMatchObject({ ok: true, value: { ok: false, message: expect.stringContaining('nothing answers') } });
  });
});

