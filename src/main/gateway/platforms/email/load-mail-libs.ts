import type { ImapFlow } from 'imapflow';
import type { createTransport } from 'nodemailer';
import type { simpleParser } from 'mailparser';
import type { convert } from 'html-to-text';
import { commonJsExport, loadOnce } from '../../load-once';

/**
 * The mail libraries (imapflow, nodemailer, mailparser, html-to-text), loaded
 * when an email connection (or its Test connection) starts: together they take
 * ~40 MB of memory, which a gateway without email should not carry.
 */
export interface MailLibs {
  readonly ImapFlow: typeof ImapFlow;
  readonly createTransport: typeof createTransport;
  readonly simpleParser: typeof simpleParser;
  readonly convert: typeof convert;
}

export const loadMailLibs = loadOnce(
  (): Promise<MailLibs> =>
    Promise.all([import('imapflow'), import('nodemailer'), import('mailparser'), import('html-to-text')]).then(([imap, mailer, parser, html]) => ({
      ImapFlow: commonJsExport(imap, 'ImapFlow', 'mail'),
      createTransport: commonJsExport(mailer, 'createTransport', 'mail'),
      simpleParser: commonJsExport(parser, 'simpleParser', 'mail'),
      convert: commonJsExport(html, 'convert', 'mail'),
    })),
);
