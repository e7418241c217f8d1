import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeliveryPage, SessionPage } from '../../../shared/api';
import { Gateway } from '../gateway';
import { reply } from '../ledger/fixtures/test-ledger';
import { silentLogger } from '../logger';

let dataDir: string;
let gateway: Gateway;
beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'homing-keyset-api-'));
  gateway = Gateway.start({ dataDir, mode: 'headless', version: '0.0.0-test', logger: silentLogger, detectSleep: false, detectOllama: false });
  await gateway.ready;
});
afterEach(async () => {
  await gateway.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('keyset pages over the API', () => {
  it('walks listDeliveries by nextCursor, and refuses a malformed cursor as a bad request', async () => {
    const { ledger } = gateway.deliveries;
    for (let n = 0; n < 120; n++) ledger.recordObligation(reply(n, 'irc'));
    const ids: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const result = await gateway.api.dispatch('listDeliveries', { filter: 'owed', ...(cursor ? { cursor } : {}) });
      if (!result.ok) throw new Error(result.error.message);
      const page = result.value as DeliveryPage;
      ids.push(...page.deliveries.map((row) => row.id));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(ids).toHaveLength(120);
    expect(new Set(ids).size).toBe(120);

    for (const bad of ['', 'not a cursor', 'bm90IGpzb24', 'WzEsMl0', '!!!!', 'x'.repeat(500)]) {
      expect(await gateway.api.dispatch('listDeliveries', { cursor: bad })).toMatchObject({
        ok: false,
        error: { code: 'bad-request', message: expect.stringMatching(/^listDeliveries: cursor: not a cursor from a previous page/) },
      });
    }
    expect(await gateway.api.dispatch('listDeliveries', { cursor: 42 })).toMatchObject({ ok: false, error: { code: 'bad-request' } });
    expect(await gateway.api.dispatch('listDeliveries', { cursor: cursor!, page: 2 })).toMatchObject({
      ok: false,
      error: { code: 'bad-request', message: 'listDeliveries: give page or cursor, not both' },
    });
  });

  it('walks listSessions by nextCursor, and refuses a malformed cursor as a bad request', async () => {
    for (let n = 0; n < 7; n++) {
      const source = { platform: 'irc', chatId: `#chan-${n}`, chatType: 'channel' as const, senderId: `nick-${n}`, senderName: `nick-${n}` };
      gateway.sessions.appendUserTurn(gateway.sessions.resolve(source).sessionId, { source, text: `hello ${n}` });
    }
    const first = await gateway.api.dispatch('listSessions', { pageSize: 5 });
    expect(first).toMatchObject({ ok: true, value: { page: 1, total: 7, nextCursor: expect.any(String) } });
    const next = (first as { value: SessionPage }).value.nextCursor!;
    expect(await gateway.api.dispatch('listSessions', { pageSize: 5, cursor: next })).toMatchObject({
      ok: true,
      value: { page: 2, nextCursor: null, sessions: { length: 2 } },
    });
    expect(await gateway.api.dispatch('listSessions', { cursor: `${next}%` })).toMatchObject({
      ok: false,
      error: { code: 'bad-request', message: expect.stringMatching(/^listSessions: cursor: not a cursor/) },
    });
  });
});
