import { loadMailLibs } from './load-mail-libs';
import type { ConnectionTestResult } from '../../../../shared/api';
import { imapPort, smtpPort, type EmailConfig } from './config-schema';
import { smtpFailure } from './send-errors';

/**
 * "Test connection" for email: an IMAP login that opens the folder, and an
 * SMTP login (nodemailer's verify: EHLO, STARTTLS, AUTH, no message). Both are
 * reported, so a user sees which half is wrong.
 */
export async function testEmailConnection(config: EmailConfig, password: string | undefined, timeoutMs: number): Promise<ConnectionTestResult> {
  if (password === undefined) return { ok: false, message: 'no mailbox password is saved yet: enter it, then test again' };
  const redact = (text: string) => text.split(password).join('[password]');
  const [imap, smtp] = await Promise.all([testImap(config, password, timeoutMs, redact), testSmtp(config, password, timeoutMs, redact)]);
  return { ok: imap.ok && smtp.ok, message: `IMAP: ${imap.message}. SMTP: ${smtp.message}.` };
}

async function testImap(config: EmailConfig, password: string, timeoutMs: number, redact: (text: string) => string): Promise<ConnectionTestResult> {
  const where = `${config.imap.host}:${imapPort(config)}`;
  const user = config.imap.user ?? config.address;
  const { ImapFlow } = await loadMailLibs();
  const client = new ImapFlow({
    host: config.imap.host,
    port: imapPort(config),
    secure: config.imap.security === 'tls',
    doSTARTTLS: config.imap.security === 'starttls' ? true : config.imap.security === 'none' ? false : undefined,
    auth: { user, pass: password },
    tls: { rejectUnauthorized: config.imap.verifyCertificate },
    logger: false,
    disableAutoIdle: true,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    maxLiteralSize: 1024 * 1024,
    maxResponseSize: 4 * 1024 * 1024,
  });
  client.on('error', () => {});
  const timer = setTimeout(() => client.close(), timeoutMs);
  try {
    await client.connect();
    const box = await client.mailboxOpen(config.folder, { readOnly: true });
    const idle = client.capabilities.has('IDLE') ? 'new mail is announced at once (IDLE)' : `the server has no IDLE: checked every ${config.pollIntervalSeconds} s`;
    await client.logout().catch(() => undefined);
    return { ok: true, message: `logged in to ${where} as ${user}${client.secureConnection ? ' over TLS' : ' WITHOUT encryption'}; ${config.folder} holds ${box.exists} messages; ${idle}` };
  } catch (error) {
    const e = error as { authenticationFailed?: unknown; responseText?: unknown; message?: unknown; code?: unknown };
    if (e.authenticationFailed === true) return { ok: false, message: `${where} refused the login for ${user}: check the user name and password` };
    const said = typeof e.responseText === 'string' ? e.responseText : String(e.message ?? error);
    return { ok: false, message: `${where}: ${redact(said)}${typeof e.code === 'string' ? ` (${e.code})` : ''}` };
  } finally {
    clearTimeout(timer);
    client.close();
  }
}

async function testSmtp(config: EmailConfig, password: string, timeoutMs: number, redact: (text: string) => string): Promise<ConnectionTestResult> {
  const where = `${config.smtp.host}:${smtpPort(config)}`;
  const user = config.smtp.user ?? config.address;
  const { createTransport } = await loadMailLibs();
  const transport = createTransport({
    host: config.smtp.host,
    port: smtpPort(config),
    secure: config.smtp.security === 'tls',
    requireTLS: config.smtp.security === 'starttls',
    ignoreTLS: config.smtp.security === 'none',
    auth: { user, pass: password },
    tls: { rejectUnauthorized: config.smtp.verifyCertificate },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    logger: false,
  });
  try {
    await transport.verify();
    return { ok: true, message: `${where} accepted the login as ${user}` };
  } catch (error) {
    return { ok: false, message: `${where}: ${smtpFailure(error, redact).error}` };
  } finally {
    transport.close();
  }
}
