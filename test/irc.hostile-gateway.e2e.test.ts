import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayOverview } from '../src/shared/api';
import { connectApi } from './support/api-socket';
import { FAKE_SERVER_NAME, startFakeIrcServer, type FakeIrcClient, type FakeIrcServer } from './support/fake-irc-server';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { BROKEN_FRAMING, KNOWN_KILLERS, serverLine } from './support/hostile-irc-lines';
import { waitUntil } from './support/wait';

/**
 * Issue 12's IRC crashes against the real `homing gateway` process: a fake IRC
 * server registers the bot properly, then sends the lines that used to throw
 * inside irc-framework's socket handler — an exception there killed the whole
 * process, not just the connection — and a few hundred generated ones. After the
 * storm the same process must run, answer its API, and still answer on IRC.
 */

const BOT = 'homing';
const CHANNEL = '#homing';

describe('the headless gateway against a hostile IRC server (a real `homing gateway` process)', () => {
  let scratch: string;
  let server: FakeIrcServer;
  let gateway: RunningGateway;
  let client: FakeIrcClient;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'homing-irc-hostile-'));
    server = await startFakeIrcServer({ caps: ['account-tag', 'extended-join', 'account-notify', 'batch', 'server-time', 'message-tags'] });
    const config = join(scratch, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({ platforms: { irc: { host: server.host, port: server.port, tls: false, nick: BOT, channels: [CHANNEL], allow: ['alice'] } } }),
    );
    gateway = await startHeadlessGateway(['--data-dir', join(scratch, 'data'), '--config', config]);
    client = await server.registered(15_000);
    await waitUntil(`${BOT} to join ${CHANNEL}`, () => client.lines.includes(`JOIN ${CHANNEL}`), 15_000);
  });

  afterAll(async () => {
    await gateway?.stop();
    await server?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  /**
   * Until the bot has answered a PING (so every line before it was handled), or
   * the gateway has died of one of them; true while the gateway lives.
   */
  async function handled(): Promise<boolean> {
    let onExit: (() => void) | undefined;
    const exited = new Promise<void>((resolve) => {
      if (gateway.child.exitCode !== null || gateway.child.signalCode !== null) resolve();
      onExit = () => resolve();
      gateway.child.once('exit', onExit);
    });
    try {
      await Promise.race([client.roundTrip(15_000), exited]);
    } finally {
      // One call a check, a dozen checks a test: a listener left behind each time is a leak (MaxListenersExceededWarning).
      if (onExit) gateway.child.off('exit', onExit);
    }
    return gateway.child.exitCode === null && gateway.child.signalCode === null;
  }

  /** The same process, its API answering, and the same IRC connection still receiving and sending. */
  async function expectStillAnswers(): Promise<void> {
    // Undo what a hostile server may legitimately have changed (channel types, casemapping).
    client.send(`:${FAKE_SERVER_NAME} 005 ${BOT} CHANTYPES=# CASEMAPPING=rfc1459 :are supported by this server`);
    expect(await handled(), `the gateway died:\n${gateway.output()}`).toBe(true);
    expect(server.clients).toHaveLength(1);

    const api = await connectApi(gateway);
    try {
      expect(await api.call('getStatus')).toMatchObject({ state: 'running', pid: gateway.child.pid });
      const overview = await api.call<GatewayOverview>('getOverview');
      expect(overview.platforms.find((platform) => platform.name === 'irc')?.state).toMatch(/^(connected|degraded)$/);
    } finally {
      api.close();
    }

    // The built-in agent answers anything with an introduction; a reply to alice means the whole path works.
    const before = client.privmsgs().filter((message) => message.target === 'alice').length;
    client.send(`:alice!a@fake.host PRIVMSG ${BOT} :still there?`);
    await waitUntil('the bot to answer alice', () => client.privmsgs().filter((message) => message.target === 'alice').length > before, 20_000);
  }

  it('survives each line that used to throw inside irc-framework, and broken framing', async () => {
    for (const line of KNOWN_KILLERS) client.send(line);
    for (const bytes of BROKEN_FRAMING) client.sendRaw(bytes);
    await expectStillAnswers();
  }, 60_000);

  it('survives a few hundred generated server lines', async () => {
    let fed = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(serverLine, { minLength: 20, maxLength: 60 }), async (lines) => {
        for (const line of lines) client.send(line);
        fed += lines.length;
        return (await handled()) && server.clients.length === 1 && !client.socket.destroyed;
      }),
      { numRuns: 10, seed: 12_012 },
    );
    expect(fed).toBeGreaterThan(200);
    await expectStillAnswers();
  }, 90_000);
});
