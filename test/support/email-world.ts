import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { simpleParser } from 'mailparser';
import { connectApi, platformConnected, type ApiSocket } from './api-socket';
import { startDovecot, type MailUser, type RunningDovecot } from './dovecot';
import { startHeadlessGateway, type RunningGateway } from './gateway-process';
import { SmtpSink, type SinkMessage } from './smtp-sink';
import { waitUntil } from './wait';

export const REPLY_AGENT = fileURLToPath(new URL('../fixtures/reply-agent.mjs', import.meta.url));

/**
 * A mail world for the end-to-end tests: a real dovecot holding the
 * assistants' mailboxes, and an SMTP sink that accepts their replies and, like
 * a mail server's final delivery, puts mail for a dovecot user into that
 * user's inbox with a Return-Path. Gateways are the real headless one
 * (`bin/homing.js gateway`), each on a data directory of its own.
 */
export class EmailWorld {
  readonly sink: SmtpSink;
  private readonly dirs: string[] = [];
  private readonly gateways: RunningGateway[] = [];
  private readonly sockets: ApiSocket[] = [];

  private constructor(
    readonly dovecot: RunningDovecot,
    private readonly users: readonly MailUser[],
  ) {
    const local = new Set(users.map((user) => user.address));
    this.sink = new SmtpSink({
      logins: new Map(users.map((user) => [user.address, user.password])),
      deliver: async (recipient, raw, mailFrom) => {
        if (local.has(recipient)) await dovecot.deliver(recipient, `Return-Path: <${mailFrom}>\r\n${raw}`);
      },
    });
  }

  static async start(users: readonly MailUser[]): Promise<EmailWorld> {
    const dovecot = await startDovecot(users);
    const world = new EmailWorld(dovecot, users);
    await world.sink.start();
    return world;
  }

  /** The config's `platforms` section for one assistant address on this world's servers, with `email` over the defaults. */
  platformsConfig(address: string, email: Record<string, unknown>): Record<string, unknown> {
    return {
      email: {
        address,
        imap: { host: '127.0.0.1', port: this.dovecot.port, security: 'none' },
        smtp: { host: '127.0.0.1', port: this.sink.address.port, security: 'none' },
        passwordEnv: 'EMAIL_PASSWORD',
        pollIntervalSeconds: 5,
        ...email,
      },
    };
  }

  /** A data directory with a config.json for one assistant address; returns the directory. */
  dataDir(address: string, email: Record<string, unknown>, agentArgs: string[] = [], extra: Record<string, unknown> = {}): string {
    const dir = mkdtempSync(join(tmpdir(), 'homing-email-e2e-'));
    this.dirs.push(dir);
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT, ...agentArgs] },
        platforms: this.platformsConfig(address, email),
        delivery: { leaseSeconds: 2 },
        ...extra,
      }),
    );
    return dir;
  }

  /** What a gateway on this world needs in its environment to log in as `address`. */
  envFor(address: string): NodeJS.ProcessEnv {
    return { EMAIL_PASSWORD: this.users.find((user) => user.address === address)!.password };
  }

  /** Starts the headless gateway on a data directory and waits until its email platform is connected. */
  async start(dataDir: string, address: string): Promise<{ gateway: RunningGateway; api: ApiSocket }> {
    const gateway = await startHeadlessGateway(['--data-dir', dataDir], this.envFor(address));
    this.gateways.push(gateway);
    const api = await connectApi(gateway);
    this.sockets.push(api);
    await whenEmailConnected(api);
    return { gateway, api };
  }

  /** SIGKILL; resolves once the process is gone. */
  async kill(gateway: RunningGateway): Promise<void> {
    await gateway.kill();
    this.gateways.splice(this.gateways.indexOf(gateway), 1);
  }

  /** Ends every gateway of this world (between tests: two gateways on one mailbox would both answer). */
  async stopGateways(): Promise<void> {
    for (const socket of this.sockets.splice(0)) socket.close();
    for (const gateway of this.gateways.splice(0)) await gateway.kill();
  }

  async dispose(): Promise<void> {
    await this.stopGateways();
    await this.sink.stop();
    await this.dovecot.dispose();
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

/** Resolves once the gateway behind `api` says its email platform is connected. */
export function whenEmailConnected(api: ApiSocket): Promise<void> {
  return waitUntil(
    'email connected',
    () => platformConnected(api, 'email'),
    30_000,
  );
}

/** A received message's body as the recipient's mail program shows it (quoted-printable decoded). */
export async function bodyOf(message: SinkMessage): Promise<string> {
  const parsed = await simpleParser(message.raw);
  return (parsed.text ?? '').replace(/\n$/, '');
}
