import { z } from 'zod';
import { secretEnvName } from '../../config/secret-env';

/**
 * The `email` section of config.json (the password is not here: it lives in
 * the secret store as `email.password`, or in the variable `passwordEnv`
 * names). One mailbox: IMAP to read it, SMTP to answer from it.
 */

/** `tls`: TLS from the first byte (IMAPS 993, SMTPS 465); `starttls`: plain, then upgraded, or refused; `none`: plain text (loopback only, for tests). */
export const MAIL_SECURITY = ['tls', 'starttls', 'none'] as const;
export type MailSecurity = (typeof MAIL_SECURITY)[number];

/** A plain address, no display name: lower-cased, since the domain is case-free and nearly every server treats the local part so too. */
export const emailAddressSchema = z
  .string()
  .trim()
  .max(320)
  .regex(/^[^\s@<>()",;:\\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*$/, 'must be an address like assistant@example.org')
  .transform((address) => address.toLowerCase());

const host = z
  .string()
  .trim()
  .min(1, 'must name the server, like imap.example.org')
  .max(253)
  .regex(/^[A-Za-z0-9.:[\]-]+$/, 'must be a host name or an IP address');

const serverSchema = (defaults: { readonly security: MailSecurity }) =>
  z.strictObject({
    host,
    /** Default: 993/143 for IMAP, 465/587 for SMTP, by `security`. */
    port: z.number().int().min(1).max(65535).optional(),
    security: z.enum(MAIL_SECURITY).default(defaults.security),
    /** The login name; default: the mailbox address. */
    user: z.string().min(1).max(320).optional(),
    /** Refuse a certificate that does not verify (default). Off only for a server with a self-signed certificate you trust. */
    verifyCertificate: z.boolean().default(true),
  });

/**
 * An authserv-id as mail servers write it: a host name (RFC 8601 §2.5 allows any
 * `value`; a server names itself), compared without case.
 */
const authServIdSchema = z
  .string()
  .trim()
  .max(253)
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/, 'must be the first word of your mail server’s Authentication-Results header, like mx.example.org')
  .transform((id) => id.toLowerCase());

export const emailConfigSchema = z.object({
  /** The mailbox's own address: replies come from it, and mail from it is never answered. */
  address: emailAddressSchema,
  /** The name shown next to the address on replies. */
  name: z.string().max(200).regex(/^\P{Cc}*$/u, 'must be one line of visible text').optional(),
  /** Further addresses that are this assistant's own (aliases, another Homing): never answered. */
  ownAddresses: z.array(emailAddressSchema).max(100).default([]),
  imap: serverSchema({ security: 'tls' }),
  smtp: serverSchema({ security: 'starttls' }),
  /** The folder read for new mail. */
  folder: z.string().min(1).max(500).default('INBOX'),
  /** Sender addresses the agent answers; everyone else is ignored (no pairing by email: a From line is easy to forge). */
  allowFrom: z.array(emailAddressSchema).max(1000).default([]),
  /**
   * Which mail server's `Authentication-Results` to believe: its authserv-id,
   * the first word of the header it adds (`mx.example.org`), or several. Unset:
   * the id the provider is known to write (trusted-auth-servers.ts: Gmail), else
   * none, and no sender is verified: anyone can write such a header.
   */
  trustedAuthServId: z
    .preprocess((value) => (typeof value === 'string' ? [value] : value), z.array(authServIdSchema).min(1, 'must name at least one mail server, like "mx.example.org"').max(20))
    .optional(),
  /**
   * Answer only mail whose sender a trusted server authenticated (SPF or DKIM
   * pass, aligned with From); default: refuse only mail a trusted server says failed.
   */
  requireAuthenticated: z.boolean().default(false),
  /** IDLE (the server announces new mail at once); false, or a server without IDLE: polling. */
  idle: z.boolean().default(true),
  /** How often the folder is checked without IDLE (and, with IDLE, as a safety net). */
  pollIntervalSeconds: z.number().int().min(1).max(3600).default(60),
  /** Larger messages are not read: the agent is told one arrived, with its subject. */
  maxMessageBytes: z.number().int().min(10_000).max(100 * 1024 * 1024).default(10 * 1024 * 1024),
});

export type EmailConfig = z.output<typeof emailConfigSchema>;

export function imapPort(config: Pick<EmailConfig, 'imap'>): number {
  return config.imap.port ?? (config.imap.security === 'tls' ? 993 : 143);
}

export function smtpPort(config: Pick<EmailConfig, 'smtp'>): number {
  return config.smtp.port ?? (config.smtp.security === 'tls' ? 465 : 587);
}

/**
 * config.json's `platforms.email` section: the adapter's settings, whether it runs,
 * and where its secrets come from (a variable's name; never the secret itself).
 */
export const emailPlatformSchema = emailConfigSchema
  .extend({
    enabled: z.boolean().default(true),
    /** The environment variable holding the mailbox password; else the secret store's `email.password`. */
    passwordEnv: secretEnvName.optional(),
    password: z.never({ error: 'the mailbox password does not belong in config.json: save it in the window, or name an environment variable in "passwordEnv"' }).optional(),
  })
  .strict();
export type EmailPlatformSection = z.output<typeof emailPlatformSchema>;
