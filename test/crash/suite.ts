import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect } from 'vitest';
import type { DeliveryPage } from '../../src/shared/api';
import { connectApi, type ApiSocket } from '../support/api-socket';
import { startHeadlessGateway, type RunningGateway } from '../support/gateway-process';
import { waitUntil } from '../support/wait';

/**
 * The crash suite, one row per platform (test/crash/<platform>.ts), each run
 * from a small entry file (test/crash.<platform>.e2e.test.ts) so vitest's two
 * workers share them: the real headless gateway (`homing gateway`, built by
 * `npm run build`) killed with SIGKILL at the moments that platform's intake
 * and delivery must survive, then started again on the same data directory.
 * `delivery.leaseSeconds: 2` lets the new process take over the dead one's rows
 * two seconds after its last heartbeat.
 *
 * The moments differ by platform (Telegram's unconfirmed update, Matrix's
 * txnId, Discord's nonce, XMPP's origin-id, an email's Message-ID, IRC's
 * paced lines), so each row brings its own cases and the service they run on;
 * the suite brings the data directory, the gateway's config and processes,
 * and the kill.
 */

const REPLY_AGENT = fileURLToPath(new URL('../fixtures/reply-agent.mjs', import.meta.url));

export interface CrashRow {
  /** The platform as the suite's name says it: `on Telegram`. */
  readonly platform: string;
  /** Registers the platform's cases, and the hooks that start and stop its service, inside the suite. */
  cases(suite: CrashSuite): void;
}

export interface CrashSuite {
  /** The case's data directory, fresh for each case. */
  readonly dataDir: string;
  /** A path in the data directory (`go`, `started`, `reply.md`). */
  file(...names: string[]): string;
  /** What the gateway runs on in this case (a row's beforeEach): the config's `platforms` and the environment they need. */
  use(platforms: Record<string, unknown>, env?: NodeJS.ProcessEnv): void;
  /** Writes config.json: test/fixtures/reply-agent.mjs with `agentArgs`, the platforms in use, a 2-second lease. */
  configure(agentArgs?: readonly string[]): void;
  /** A gateway on the data directory, and its API. */
  start(): Promise<{ gateway: RunningGateway; api: ApiSocket }>;
  /** SIGKILL; resolves once the process is gone. */
  kill(gateway: RunningGateway): Promise<void>;
  /** `kill`, and checks that SIGKILL is what ended it. */
  crash(gateway: RunningGateway): Promise<void>;
  /** Writes the agent's reply for `--reply-file`, a blank line between paragraphs; its path. */
  replyFile(paragraphs: readonly string[]): string;
  /** Waits until the ledger lists a delivered reply. */
  whenDelivered(api: ApiSocket, timeoutMs: number, what?: string): Promise<void>;
}

/** The lines reply-agent.mjs wrote to its `--started` file: `started <pid> <text>` each time it began a turn. */
export const agentStarts = (file: string): string[] => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : []);

export function defineCrashSuite(row: CrashRow): void {
  describe(`the headless gateway killed with SIGKILL on ${row.platform}`, () => {
    const gateways: RunningGateway[] = [];
    const sockets: ApiSocket[] = [];
    let dataDir = '';
    let platforms: Record<string, unknown> = {};
    let env: NodeJS.ProcessEnv = {};

    beforeEach(() => {
      dataDir = mkdtempSync(join(tmpdir(), `homing-crash-${row.platform.toLowerCase().replace(/[^a-z]+/g, '-')}-`));
      platforms = {};
      env = {};
    });

    afterEach(async () => {
      for (const socket of sockets.splice(0)) socket.close();
      for (const gateway of gateways.splice(0)) await gateway.kill();
      killOrphanedAgents(join(dataDir, 'started'));
      rmSync(dataDir, { recursive: true, force: true });
    });

    const kill = async (gateway: RunningGateway) => {
      await gateway.kill();
      gateways.splice(gateways.indexOf(gateway), 1);
    };

    row.cases({
      get dataDir() {
        return dataDir;
      },
      file: (...names) => join(dataDir, ...names),
      use(inUse, needs = {}) {
        platforms = inUse;
        env = needs;
      },
      configure(agentArgs = []) {
        writeFileSync(
          join(dataDir, 'config.json'),
          JSON.stringify({
            agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT, ...agentArgs] },
            platforms,
            delivery: { leaseSeconds: 2 },
          }),
        );
      },
      async start() {
        const gateway = await startHeadlessGateway(['--data-dir', dataDir], env);
        gateways.push(gateway);
        const api = await connectApi(gateway);
        sockets.push(api);
        return { gateway, api };
      },
      kill,
      async crash(gateway) {
        await kill(gateway);
        expect(gateway.child.signalCode).toBe('SIGKILL');
      },
      replyFile(paragraphs) {
        const file = join(dataDir, 'reply.md');
        writeFileSync(file, paragraphs.join('\n\n'));
        return file;
      },
      whenDelivered: (api, timeoutMs, what = 'the reply delivered') =>
        waitUntil(
          what,
          async () => (await api.call<DeliveryPage>('listDeliveries', {})).deliveries.some((delivery) => delivery.state === 'delivered'),
          timeoutMs,
        ),
    });
  });
}

/**
 * A command agent runs in its own process group, so SIGKILL on the gateway leaves
 * it running; the fixture ends by itself, and this makes sure of it. Only pids that
 * still run reply-agent.mjs (listed by its `--started` file) are touched.
 */
function killOrphanedAgents(startedFile: string): void {
  for (const line of agentStarts(startedFile)) {
    const pid = Number(/^started (\d+)/.exec(line)?.[1]);
    if (!pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('reply-agent.mjs')) process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}
