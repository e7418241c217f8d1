import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { TranscriptPage } from '../src/shared/api';
import { API_SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX } from '../src/shared/headless-auth';
import { systemClock } from '../src/main/gateway/clock';
import { openDatabase } from '../src/main/gateway/db/database';
import { homingMigrations } from '../src/main/gateway/db/migrations';
import { LOCAL_CHAT_ID, LOCAL_PLATFORM } from '../src/main/gateway/platforms/local/local-adapter';
import { loadOrCreateInstallSecret } from '../src/main/gateway/session/install-secret';
import { createPseudonymiser } from '../src/main/gateway/session/pseudonyms';
import type { SessionSource } from '../src/main/gateway/session/source';
import { SessionStore } from '../src/main/gateway/session/store';
import { connectApi } from './support/api-socket';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { samplePeakMemory } from './support/process-memory';
import { waitUntil } from './support/wait';

const SLOW_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));

/** The largest page the API gives: 500 messages of 20 000 characters, ~10 MB of JSON. */
const TURNS = 500;
const LONG = 'a long message that fills the page. '.repeat(560).slice(0, 20_000);
const CONNECTIONS = 64;
const PER_CONNECTION = 64;
/** The bound the issue states for the whole attack. */
const RSS_BOUND_MB = 400;

const LOCAL: SessionSource = { platform: LOCAL_PLATFORM, chatId: LOCAL_CHAT_ID, chatType: 'direct', senderId: 'owner', senderName: 'You' };

/** A data directory whose local conversation holds TURNS long messages, written before the gateway starts. */
async function filledDataDir(): Promise<{ dataDir: string; sessionId: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'homing-flood-'));
  const db = openDatabase(join(dataDir, 'homing.db'), { migrations: homingMigrations });
  const store = new SessionStore({ db, dataDir, pseudonyms: createPseudonymiser(loadOrCreateInstallSecret(dataDir)), clock: systemClock });
  const { sessionId } = store.resolve(LOCAL);
  for (let i = 0; i < TURNS / 2; i++) {
    store.appendUserTurn(sessionId, { source: LOCAL, text: `${i} ${LONG}`, messageRef: `m${i}` });
    store.appendAssistantTurn(sessionId, { obligationId: `o${i}`, text: LONG, replyTo: `m${i}` });
  }
  await store.whenDurable(sessionId);
  db.close();
  return { dataDir, sessionId };
}


/** One hostile client: asks for PER_CONNECTION of the largest pages at once, then goes away without reading. */
async function askAndLeave(gateway: RunningGateway, sessionId: string): Promise<void> {
  const socket = new WebSocket(`ws://127.0.0.1:${gateway.port}/api`, [API_SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX + gateway.token]);
  socket.on('error', () => {});
  await new Promise<void>((resolve) => {
    socket.once('open', () => resolve());
    socket.once('close', () => resolve());
  });
  for (let id = 0; id < PER_CONNECTION; id++) socket.send(JSON.stringify({ id, method: 'getTranscript', params: { sessionId, pageSize: TURNS } }));
  await new Promise((resolve) => setTimeout(resolve, 20));
  socket.terminate();
}

describe.runIf(process.platform === 'linux')('the API flooded with the largest pages by 64 connections that leave', () => {
  let dataDir: string;
  let sessionId: string;
  let gateway: RunningGateway;

  beforeAll(async () => {
    ({ dataDir, sessionId } = await filledDataDir());
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
  }, 60_000);

  afterAll(async () => {
    await gateway?.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('stays bounded in memory, answers status on a new connection at once, delivers a reply owed meanwhile, and stops on SIGTERM in time', async () => {
    const window = await connectApi(gateway);
    await window.call('subscribe');
    const page = await window.call<TranscriptPage>('getTranscript', { sessionId, pageSize: TURNS });
    expect(page.messages).toHaveLength(TURNS);

    const memory = samplePeakMemory(gateway.child);
    let peakMb = 0;
    const statusTimes: number[] = [];
    try {
      const attack = Promise.all(Array.from({ length: CONNECTIONS }, () => askAndLeave(gateway, sessionId)));
      // A reply owed during the attack: the window's own chat asks the built-in agent.
      await window.call('sendLocalMessage', { text: '/new are you still there?' });
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        const fresh = await connectApi(gateway);
        await fresh.call('getStatus');
        statusTimes.push(performance.now() - started);
        fresh.close();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await attack;
      await waitUntil(
        'the reply owed during the attack delivered',
        () => window.events.some((event) => event.type === 'delivery.changed' && event.delivery.state === 'delivered'),
        30_000,
      );
      // The window's own large requests are still served after the attack (that the attackers'
      // queued ones are dropped with their connections is server.test.ts's to show).
      expect((await window.call<TranscriptPage>('getTranscript', { sessionId, pageSize: 1 })).messages).toHaveLength(1);
    } finally {
      peakMb = memory.stop();
      window.close();
    }
    expect(peakMb).toBeLessThan(RSS_BOUND_MB);
    expect(Math.max(...statusTimes)).toBeLessThan(1_000);

    const stopping = performance.now();
    await gateway.stop();
    expect(performance.now() - stopping).toBeLessThan(5_000);
    expect(gateway.child.exitCode).toBe(0);
  }, 120_000);

  it('stops on SIGTERM within 5 s in the middle of the attack and of a turn that takes a minute, and says what it dropped', async () => {
    // An agent that takes a minute to answer: its turn is cut short by the stop (and answered by the next start).
    const started = join(dataDir, 'started.txt');
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ agent: { type: 'command', command: process.execPath, args: [SLOW_AGENT, '--delay-ms', '60000', '--started', started] } }));
    const again = await startHeadlessGateway(['--data-dir', dataDir]);
    try {
      const window = await connectApi(again);
      await window.call('sendLocalMessage', { text: '/new take your time' });
      await waitUntil('the slow turn started', () => existsSync(started), 15_000);
      window.close();
      const attack = Promise.all(Array.from({ length: CONNECTIONS }, () => askAndLeave(again, sessionId)));
      await new Promise((resolve) => setTimeout(resolve, 30));
      const stopping = performance.now();
      await again.stop();
      expect(performance.now() - stopping).toBeLessThan(5_000);
      expect(again.child.exitCode).toBe(0);
      expect(again.output()).toMatch(/gateway stopped \{"droppedRequests":\d+,"turnsCutShort":1,"conversationsStillSending":\d+\}/);
      await attack;
    } finally {
      await again.kill();
    }
  }, 60_000);
});
