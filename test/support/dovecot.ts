import { chmodSync, chownSync, mkdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
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
  /** The folder's messages (UID, raw source and flags), read as the user without setting \\Seen. */
  messages(address: string, folder?: string): Promise<{ uid: number; source: string; flags: string[] }[]>;
  /** Deletes a message for good (flag \\Deleted, then UID EXPUNGE), as a person's mail program does. */
  remove(address: string, uid: number, folder?: string): Promise<void>;
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
        const list: { uid: number; source: string; flags: string[] }[] = [];
        for await (const message of client.fetch('1:*', { uid: true, source: true, flags: true })) {
          list.push({ uid: message.uid, source: message.source?.toString('utf8') ?? '', flags: [...(message.flags ?? [])] });
        }
        return list;
      }),
    remove: (address, uid, folder = 'INBOX') =>
      asUser(address, async (client) => {
        await client.mailboxOpen(folder);
        if (!(await client.messageDelete(String(uid), { uid: true }))) throw new Error(`dovecot did not delete UID ${uid}`);
      }),
    stop,
    start: server.start,
    dispose: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A relay in front of an IMAP server (DovecotRelay). */
export interface DovecotRelay {
  readonly port: number;
  /** The next connection that asks for mail (a `FETCH` or `SEARCH`) is dropped at that moment, once. */
  cutAtNextRead(): void;
  /**
   * From now on new connections are taken but get no greeting and reach no
   * server — the server accepts and then answers nothing — until the returned
   * function is called; then they go through. Connections open before go on.
   */
  holdNewConnections(): () => void;
  close(): Promise<void>;
}

/**
 * A byte relay to the IMAP server on `targetPort` (loopback), for the failures
 * a real server cannot be asked for: a connection dropped as it asks for mail
 * (RFC 3501 §7.1.5: a server may close a connection at any time, with or
 * without BYE) and a server that takes connections and says nothing.
 */
export async function startDovecotRelay(targetPort: number): Promise<DovecotRelay> {
  const sockets = new Set<Socket>();
  const held = new Set<() => void>();
  let cutArmed = false;
  let holding = false;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  };
  const relay = (client: Socket) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    track(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('data', (data: Buffer) => {
      if (cutArmed && /\b(UID )?(FETCH|SEARCH)\b/i.test(data.toString('latin1'))) {
        cutArmed = false;
        end();
        return;
      }
      upstream.write(data);
    });
    upstream.on('data', (data: Buffer) => client.write(data));
    client.resume();
  };
  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    track(client);
    if (!holding) return relay(client);
    const go = () => {
      held.delete(go);
      if (!client.destroyed) relay(client);
    };
    held.add(go);
    client.on('close', () => held.delete(go));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    cutAtNextRead: () => {
      cutArmed = true;
    },
    holdNewConnections: () => {
      holding = true;
      return () => {
        holding = false;
        for (const go of [...held]) go();
      };
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
