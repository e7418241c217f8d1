import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectApi, platformConnected, type ApiSocket } from './support/api-socket';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { samplePeakMemory } from './support/process-memory';
import { waitUntil } from './support/wait';
import type { XmppRelay } from './support/xmpp-relay';
import type { XmppUser } from './support/xmpp-user';
import { useXmppWorld, XMPP_PASSWORDS } from './support/xmpp-world';

/**
 * A hostile XMPP server, as the real headless gateway sees it: a real prosody
 * behind a relay that writes into the gateway's stream what no server should
 * send — garbage, a stanza flood, a huge stanza, an element that never closes.
 * The process must live with bounded memory, reconnect, and answer the next
 * message once.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));
const RSS_BOUND_MB = 400;


describe.runIf(process.platform === 'linux')('the headless gateway against a hostile XMPP server', () => {
  const world = useXmppWorld();
  let relay: XmppRelay;
  let dataDir: string;
  let alice: XmppUser;
  let gateway: RunningGateway | undefined;
  let api: ApiSocket | undefined;

  beforeEach(() => {
    ({ relay, alice } = world);
    dataDir = mkdtempSync(join(tmpdir(), 'homing-xmpp-hostile-'));
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT] },
        platforms: { xmpp: { jid: 'homing@localhost', host: '127.0.0.1', port: relay.port, security: 'none', passwordEnv: 'XMPP_PASSWORD', allowFrom: ['alice@localhost'] } },
        delivery: { leaseSeconds: 2 },
      }),
    );
  });

  afterEach(async () => {
    api?.close();
    await gateway?.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const answers = () => alice.bodiesFrom('homing@localhost').map((message) => message.body);

  async function startGateway(): Promise<{ gateway: RunningGateway; api: ApiSocket; connected: () => Promise<boolean> }> {
    gateway = await startHeadlessGateway(['--data-dir', dataDir], { XMPP_PASSWORD: XMPP_PASSWORDS.homing });
    api = await connectApi(gateway);
    const socket = api;
    const connected = () => platformConnected(socket, 'xmpp');
    await waitUntil('xmpp connected', connected, 30_000);
    return { gateway, api, connected };
  }

  for (const [what, bytes] of [
    ['garbage that is no XML', () => '<<<>>> &bogus; </notopen> \u0000 <?xml version="1.0"?>'],
    ['a flood of 20 000 stanzas', () => Array.from({ length: 20_000 }, (_, i) => `<presence from="x${i}@localhost/r" to="homing@localhost"/>`).join('')],
    ['a 2 MB stanza', () => `<message from="alice@localhost/evil" to="homing@localhost" type="chat"><body>${'z'.repeat(2 << 20)}</body></message>`],
    ['an element that never closes (64 MB of text)', () => `<message from="alice@localhost/evil" to="homing@localhost"><body>${'w'.repeat(64 << 20)}`],
  ] as const) {
    it(`lives through ${what}, with bounded memory, and answers the next message once`, async () => {
      const { gateway: running, api: socket, connected } = await startGateway();
      await alice.say('homing@localhost', 'before');
      await waitUntil('the first answer', () => answers().length === 1, 30_000);
      const memory = samplePeakMemory(running.child);
      let peakMb = 0;
      try {
        expect(relay.inject(bytes())).toBeGreaterThan(0);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await waitUntil('connected again', connected, 60_000);
        await alice.say('homing@localhost', 'after');
        await waitUntil('the answer after', () => answers().length >= 2, 60_000);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      } finally {
        peakMb = memory.stop();
      }
      expect(running.child.exitCode, running.output()).toBeNull();
      expect(await socket.call('getStatus')).toMatchObject({ state: 'running' });
      expect(answers()).toEqual(['You said: before', 'You said: after']);
      expect(peakMb).toBeLessThan(RSS_BOUND_MB);
    }, 150_000);
  }
});
