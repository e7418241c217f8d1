import { chmodSync, chownSync, mkdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ImapFlow } from 'imapflow';
import { canConnect, freePort } from './ports';
import { requireInstalled, serverProcess, type RunningServer } from './server-process';

/** Debian's dovecot-imapd installs it here; the absolute path works outside root's PATH too. */
export const DOVECOT_PATH = process.env.HOMING_DOVECOT ?? '/usr/sbin/dovecot';
const CONFIG_TEMPLATE = fileURLToPath(new URL('../fixtures/dovecot.conf', import.meta.url));
/** Dovecot's mail processes may not run as root: they run as nobody (65534), which owns the homes. */
const MAIL_UID = 65534;

export interface MailUser {
  readonly address: string;
  readonly password: string;
}

/** Across `stop()` and `start()` its users and their mail stay. */
export interface RunningDovecot extends RunningServer {
  /** Puts a raw RFC 5322 message into the user's folder by IMAP APPEND (as a mail server's delivery would); its UID. */
  deliver(address: string, raw: string | Buffer, folder?: string): Promise<number>;
  /** The folder's messages (UID and raw source), read as the user. */
  messages(address: string, folder?: string): Promise<{ uid: number; source: string }[]>;
}

/**
 * A real dovecot (IMAP) on 127.0.0.1: the config from test/fixtures in a
 * fresh temp dir, a free port, a users file, `dovecot -F -c <cfg>` as our own
 * child (server-process.ts). Each test file starts its own.
 */
export async function startDovecot(users: readonly MailUser[]): Promise<RunningDovecot> {
  requireInstalled(DOVECOT_PATH, 'dovecot', 'dovecot-imapd');
  const dir = await mkdtemp(join(tmpdir(), 'homing-dovecot-'));
  // The mail processes (uid 65534) must reach their homes inside it.
  chmodSync(dir, 0o755);
  const port = await freePort();
  for (const sub of ['run', 'state', 'home']) mkdirSync(join(dir, sub));
  chownSync(join(dir, 'home'), MAIL_UID, MAIL_UID);
  await writeFile(join(dir, 'users'), users.map((user) => `${user.address}:{PLAIN}${user.password}\n`).join(''));
  const configPath = join(dir, 'dovecot.conf');
  await writeFile(configPath, readFileSync(CONFIG_TEMPLATE, 'utf8').replaceAll('@DIR@', dir).replaceAll('@PORT@', String(port)));
  const passwords = new Map(users.map((user) => [user.address, user.password]));

  const server = serverProcess({ name: 'dovecot', path: DOVECOT_PATH, args: ['-F', '-c', configPath], port: () => port, startMs: 10_000, stopMs: 3_000 });

  const stop = async (): Promise<void> => {
    await server.stop();
    // Its login and mail processes follow the master out; wait until the port is free again.
    for (let i = 0; i < 200 && (await canConnect(port)); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  };

  const asUser = async <T>(address: string, work: (client: ImapFlow) => Promise<T>): Promise<T> => {
    const password = passwords.get(address);
    if (password === undefined) throw new Error(`${address} is not a user of this dovecot`);
    const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, doSTARTTLS: false, auth: { user: address, pass: password }, logger: false });
    client.on('error', () => {});
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.logout().catch(() => client.close());
    }
  };

  await server.start();
  return {
    host: '127.0.0.1',
    port,
    output: server.output,
    deliver: (address, raw, folder = 'INBOX') =>
      asUser(address, async (client) => {
        const appended = await client.append(folder, raw);
        if (!appended || appended.uid === undefined) throw new Error('dovecot did not say which UID the message got');
        return appended.uid;
      }),
    messages: (address, folder = 'INBOX') =>
      asUser(address, async (client) => {
        await client.mailboxOpen(folder);
        const list: { uid: number; source: string }[] = [];
        for await (const message of client.fetch('1:*', { uid: true, source: true })) list.push({ uid: message.uid, source: message.source?.toString('utf8') ?? '' });
        return list;
      }),
    stop,
    start: server.start,
    dispose: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
