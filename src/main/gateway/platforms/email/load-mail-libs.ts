import type { ImapFlow } from 'imapflow';
import type { createTransport } from 'nodemailer';
import type { simpleParser } from 'mailparser';
import type { convert } from 'html-to-text';
import { loadOnce } from '../../load-once';

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
      ImapFlow: named(imap, 'ImapFlow'),
      createTransport: named(mailer, 'createTransport'),
      simpleParser: named(parser, 'simpleParser'),
      convert: named(html, 'convert'),
    })),
);

/** A CommonJS module's export, whether the loader gave it as a named export or only under `default`. */
function named<M extends object, K extends string>(module: M, name: K): K extends keyof M ? M[K] : never {
  const direct = (module as Record<string, unknown>)[name];
  const fallback = ((module as { default?: Record<string, unknown> }).default ?? {})[name];
  const value = direct ?? fallback;
  if (value === undefined) throw new Error(`the mail library has no ${name} (a broken install?)`);
  return value as K extends keyof M ? M[K] : never;
}
