import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../../shared/api';
import { Gateway } from '../gateway';
import { silentLogger } from '../logger';
import { INSTALL_SECRET_FILE } from './install-secret';

let dataDir: string;
let gateway: Gateway;
beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'homing-session-api-'));
  gateway = Gateway.start({ dataDir, mode: 'headless', version: '0.0.0-test', logger: silentLogger, detectSleep: false, detectOllama: false });
  await gateway.ready;
});
afterEach(async () => {
  await gateway.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const source = { platform: 'xmpp', chatId: 'room@conference.example.org', chatType: 'group' as const, senderId: 'room@conference.example.org/Nick With Spaces', senderName: 'Nick' };

describe('the session API of a running gateway', () => {
  it('creates the install secret and answers listSessions and getTranscript', async () => {
    expect(statSync(join(dataDir, INSTALL_SECRET_FILE)).isFile()).toBe(true);
    const events: GatewayEvent[] = [];
    gateway.bus.on((event) => events.push(event));
    const { sessionId } = gateway.sessions.resolve(source);
    gateway.sessions.appendUserTurn(sessionId, { source, text: 'hello' });

    expect(await gateway.api.dispatch('listSessions', undefined)).toMatchObject({
      ok: true,
      value: { total: 1, page: 1, sessions: [{ sessionId, platform: 'xmpp', title: null, lastMessagePreview: 'hello', messageCount: 1 }] },
    });
    expect(await gateway.api.dispatch('getTranscript', { sessionId, page: 1 })).toMatchObject({
      ok: true,
      value: { session: { sessionId }, page: 1, pageCount: 1, totalMessages: 1, messages: [{ role: 'user', text: 'hello', sender: { name: 'Nick' } }] },
    });
    expect(events.filter((event) => event.type === 'session.updated').map((event) => event.type === 'session.updated' && event.change)).toEqual([
      'created',
      'message',
    ]);
  });

  it('answers not-found for an unknown session and bad-request for a non-id', async () => {
    expect(await gateway.api.dispatch('getTranscript', { sessionId: '20260101-000000-000-0000000000' })).toMatchObject({
      ok: false,
      error: { code: 'not-found' },
    });
    expect(await gateway.api.dispatch('getTranscript', { sessionId: '../../etc/passwd' })).toMatchObject({
      ok: false,
      error: { code: 'bad-request' },
    });
    expect(await gateway.api.dispatch('listSessions', { pageSize: 0 })).toMatchObject({ ok: false, error: { code: 'bad-request' } });
  });
});
