import { ImapFlow } from 'imapflow';
import { simpleParser } from 'mailparser';
import { startDovecot, startDovecotRelay } from '../support/dovecot';
import { rawMail, type MailParts } from '../support/mail';
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
 * without BYE). The same relay holds downloads: the assistant fetches a
 * mail's file on a new connection, and new connections get no answer while
 * held. No `dedup`: SMTP does not deduplicate, so every resend is marked.
 */
export async function startEmailWorld(): Promise<ConformanceWorld> {
  const dovecot = await startDovecot([AGENT]);
  const sink = new SmtpSink({ logins: new Map([[AGENT.address, AGENT.password]]) });
  await sink.start();
  const relay = await startDovecotRelay(dovecot.port);
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
  const mail = (from: string, text: string, threaded: boolean, attachments: MailParts['attachments'] = []) => {
    const messageId = `<conformance-${++sent}.${Date.now().toString(36)}@people.test>`;
    const inThread = threaded && root !== undefined ? { inReplyTo: root, references: [root] } : {};
    if (threaded) root ??= messageId;
    return rawMail({ from, to: AGENT.address, subject: 'Conformance', messageId, ...inThread, text, attachments });
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
        if (headerOf(message.raw, 'Auto-Submitted') !== 'auto-replied') {
          texts.push(body);
          continue;
        }
        // The lines the agent writes of the files it was given (`[file …]`) are its own, so they stay.
        const files = body.split('\n').filter((line) => /^\[file .*\]$/.test(line));
        texts.push([body.split('\n\n[')[0]!, ...files].join('\n'));
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
    async sendFile(file) {
      // A mail program sends a file as an attachment, the message's text as its body.
      await append(mail(PERSON, file.caption ?? '', true, [{ name: file.name, type: file.mime, content: file.bytes }]));
    },
    holdDownloads() {
      // The assistant reads a file on a connection of its own, opened for it: holding every new
      // connection holds the downloads, while the connection that reads new mail goes on.
      return relay.holdNewConnections();
    },
    async dispose() {
      await watcher?.logout().catch(() => watcher?.close());
      await sink.stop();
      await relay.close();
      await dovecot.dispose();
    },
  };
}
