import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { ImapFlow } from 'imapflow';
import { simpleParser } from 'mailparser';
import { startDovecot } from '../support/dovecot';
import { rawMail } from '../support/mail';
import { headerOf, SmtpSink } from '../support/smtp-sink';
import { waitUntil } from '../support/wait';
import type { ConformanceWorld } from './world';

const AGENT = { address: 'agent@test.local', password: 'agentpw' };
const PERSON = 'alice@people.test';
/** Writes mail the assistant leaves alone (not in allowFrom): the readiness probes and the flood's bulk. */
const STRANGER = 'stranger@people.test';
/** Mail in the flood: more than two of the adapter's batches of 100 UIDs. */
const FLOOD_MAILS = 250;

/**
 * The conformance row for email: a real dovecot holding the assistant's
 * mailbox, mail delivered into it by IMAP APPEND (as a mail server's final
 * delivery would), and an SMTP sink taking the replies. The person writes in
 * one thread ('direct'; email has no group), so the replies come in order.
 *
 * The assistant reaches dovecot through a relay here, so `failNextCatchUp`
 * can cut its connection the moment it asks for mail (a `FETCH` or `SEARCH`):
 * a dropped connection mid-read, the transient failure an IMAP client meets
 * (RFC 3501 §7.1.5: a server may close a connection at any time, with or
 * without BYE). No `dedup`: SMTP does not deduplicate, so every resend is marked.
 */
export async function startEmailWorld(): Promise<ConformanceWorld> {
  const dovecot = await startDovecot([AGENT]);
  const sink = new SmtpSink({ logins: new Map([[AGENT.address, AGENT.password]]) });
  await sink.start();
  const relay = await startCuttableRelay(dovecot.port);
  let watcher: ImapFlow | undefined;
  let sent = 0;
  let root: string | undefined;

  /** A world-owned session: appends without a login each, and sees what other sessions did to the folder. */
  const session = async (): Promise<ImapFlow> => {
    if (watcher?.usable) return watcher;
    const fresh = new ImapFlow({ host: '127.0.0.1', port: dovecot.port, secure: false, doSTARTTLS: false, auth: { user: AGENT.address, pass: AGENT.password }, logger: false });
    fresh.on('error', () => {});
    await fresh.connect();
    return (watcher = fresh);
  };
  const append = async (raw: string) => {
    await (await session()).append('INBOX', raw);
  };
  const mail = (from: string, text: string, threaded: boolean) => {
    const messageId = `<conformance-${++sent}.${Date.now().toString(36)}@people.test>`;
    const inThread = threaded && root !== undefined ? { inReplyTo: root, references: [root] } : {};
    if (threaded) root ??= messageId;
    return rawMail({ from, to: AGENT.address, subject: 'Conformance', messageId, ...inThread, text });
  };

  return {
    platform: 'email',
    platformsConfig: {
      email: {
        address: AGENT.address,
        imap: { host: '127.0.0.1', port: relay.port, security: 'none' },
        smtp: { host: '127.0.0.1', port: sink.address.port, security: 'none' },
        passwordEnv: 'EMAIL_PASSWORD',
        allowFrom: [PERSON],
        pollIntervalSeconds: 5,
      },
    },
    env: { EMAIL_PASSWORD: AGENT.password },
    keepsWhileDown: true,
    places: ['direct'],
    async whenBotReady(timeoutMs) {
      // A folder's first read starts after the mail already there, from the UIDNEXT its SELECT
      // reports. IMAP's \Recent (RFC 3501 §2.3.2) goes to the first session that selects the folder
      // after a message arrives: once a probe here is no longer recent to this session (which never
      // selects), the gateway has selected the folder, and later mail is new to it.
      await append(mail(STRANGER, 'readiness probe', false));
      await waitUntil(
        'the assistant selected its folder (the probe is no longer \\Recent)',
        async () => {
          const status = await (await session()).status('INBOX', { recent: true });
          return status !== false && status.recent === 0;
        },
        timeoutMs,
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}\n${dovecot.output().slice(-2000)}`);
      });
    },
    async say(text) {
      await append(mail(PERSON, text, true));
    },
    async replies() {
      const texts: string[] = [];
      for (const message of sink.to(PERSON).filter((reply) => reply.accepted)) {
        const parsed = await simpleParser(message.raw);
        // The agent's input is the body, then bracketed lines (sender, sender check): its answer echoes them.
        const body = (parsed.text ?? '').replace(/\n$/, '');
        texts.push(headerOf(message.raw, 'Auto-Submitted') === 'auto-replied' ? body.split('\n\n[')[0]! : body);
      }
      return texts;
    },
    async flood() {
      const addressed = [`flood: the mail after ${FLOOD_MAILS - 10} others`, 'flood: the last mail'];
      for (let i = 0; i < FLOOD_MAILS; i++) {
        if (i === FLOOD_MAILS - 10) await append(mail(PERSON, addressed[0]!, true));
        else await append(mail(STRANGER, `bulk ${i}`, false));
      }
      await append(mail(PERSON, addressed[1]!, true));
      return addressed;
    },
    failNextCatchUp() {
      relay.cutAtNextRead();
    },
    async dispose() {
      await watcher?.logout().catch(() => watcher?.close());
      await sink.stop();
      await relay.close();
      await dovecot.dispose();
    },
  };
}

/** A byte relay to the IMAP server that can drop a connection once, as it asks for mail. */
async function startCuttableRelay(targetPort: number): Promise<{ port: number; cutAtNextRead(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let armed = false;
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (data: Buffer) => {
      if (armed && /\b(UID )?(FETCH|SEARCH)\b/i.test(data.toString('latin1'))) {
        armed = false;
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(data);
    });
    upstream.on('data', (data: Buffer) => client.write(data));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    cutAtNextRead: () => {
      armed = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
