import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { connectApi } from './support/api-socket';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { waitUntil } from './support/wait';

const RECORD_IMPORTS = pathToFileURL(join(import.meta.dirname, 'support', 'record-imports.mjs')).href;
/** Each platform's client library, loaded only when that platform starts. */
const PLATFORM_LIBRARIES = ['grammy', 'irc-framework', '@xmpp/client', 'discord.js', '@slack/web-api', '@slack/socket-mode', 'imapflow', 'nodemailer', 'mailparser'];
/** Loaded only at an ACP agent's first turn. */
const ACP_SDK = '@agentclientprotocol/sdk';
/** pdf.js (through unpdf): loaded only when a message's PDF is first read (media/document-text.ts). */
const PDF_READER = 'unpdf';

/** A loopback port nothing listens on (bound, then closed): a platform pointed there fails to connect at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('what a start loads', () => {
  const dirs: string[] = [];
  const gateways: RunningGateway[] = [];

  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.stop();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** Starts `homing gateway` on a data dir holding `config`, recording the packages it imports, and waits for its first API answer. */
  async function start(config: unknown, env: NodeJS.ProcessEnv = {}): Promise<{ imported: () => string[] }> {
    const dataDir = mkdtempSync(join(tmpdir(), 'homing-imports-'));
    dirs.push(dataDir);
    if (config !== undefined) writeFileSync(join(dataDir, 'config.json'), JSON.stringify(config));
    const log = join(dataDir, 'imports.log');
    writeFileSync(log, '');
    const nodeOptions = [process.env.NODE_OPTIONS, `--import=${RECORD_IMPORTS}`].filter(Boolean).join(' ');
    const gateway = await startHeadlessGateway(['--data-dir', dataDir], { ...env, NODE_OPTIONS: nodeOptions, HOMING_TEST_IMPORT_LOG: log, HOMING_DATA_DIR: '' });
    gateways.push(gateway);
    const api = await connectApi(gateway);
    try {
      await api.call('getOverview');
    } finally {
      api.close();
    }
    return { imported: () => readFileSync(log, 'utf8').split('\n').filter(Boolean) };
  }

  it('a gateway on the built-in chat and agent loads no platform client library, nor the ACP SDK, nor the PDF reader', async () => {
    const imported = (await start(undefined)).imported();
    // The recorder works: the database's binding is imported at every start.
    expect(imported).toContain('better-sqlite3');
    for (const library of [...PLATFORM_LIBRARIES, ACP_SDK, PDF_READER]) expect(imported, library).not.toContain(library);
  });

  it('a gateway with IRC, Telegram and XMPP configured loads their libraries as they connect, and nothing else', async () => {
    const port = await closedPort();
    const { imported } = await start(
      {
        platforms: {
          irc: { host: '127.0.0.1', port, tls: false, nick: 'homing', channels: [] },
          telegram: { apiRoot: `http://127.0.0.1:${port}`, tokenEnv: 'TELEGRAM_TOKEN' },
          xmpp: { jid: 'homing@localhost', host: '127.0.0.1', port, security: 'none', passwordEnv: 'XMPP_PASSWORD' },
        },
      },
      { TELEGRAM_TOKEN: '123456:test-token', XMPP_PASSWORD: 'test-password' },
    );
    const configured = ['grammy', 'irc-framework', '@xmpp/client'];
    await waitUntil('the IRC, Telegram and XMPP libraries to load', () => configured.every((library) => imported().includes(library)), 10_000);
    const loaded = imported();
    for (const library of [...PLATFORM_LIBRARIES, ACP_SDK].filter((library) => !configured.includes(library))) expect(loaded, library).not.toContain(library);
  });

  it('a gateway with Slack configured loads Slack’s libraries as it connects', async () => {
    const port = await closedPort();
    const { imported } = await start(
      { platforms: { slack: { apiUrl: `http://127.0.0.1:${port}/api/`, appTokenEnv: 'SLACK_APP_TOKEN', botTokenEnv: 'SLACK_BOT_TOKEN' } } },
      { SLACK_APP_TOKEN: 'xapp-1-test', SLACK_BOT_TOKEN: 'xoxb-test' },
    );
    await waitUntil('the Slack Web API library to load', () => imported().includes('@slack/web-api'), 10_000);
    for (const library of PLATFORM_LIBRARIES.filter((library) => !library.startsWith('@slack/'))) expect(imported(), library).not.toContain(library);
  });
});
