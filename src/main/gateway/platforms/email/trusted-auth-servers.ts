import type { EmailConfig } from './config-schema';

/**
 * Whose `Authentication-Results` the email adapter believes (auth-results.ts):
 * the authserv-ids configured in `trustedAuthServId`, else the one the
 * mailbox's provider is known to write, else none.
 *
 * Known providers, by IMAP host, each with where its id is seen:
 * - Gmail and Google Workspace (`imap.gmail.com`): `mx.google.com`, the first
 *   word of the header in Gmail's "Show original" (e.g. inboxmender.site/blog/
 *   gmail-authentication-results-spf-dkim-dmarc, mailsleuth.ai/blog/
 *   gmail-s-authentication-results-header-translated-for-soc-analysts).
 * Not listed: Outlook / Microsoft 365 writes its header without an authserv-id
 * (MimeKit issue #490, "Support parsing Office 365 Authentication-Results"),
 * so no id can single it out; for others no published id was found. Their
 * users set `trustedAuthServId` from a message's own header.
 */
const KNOWN_PROVIDERS: Readonly<Record<string, readonly string[]>> = {
  'imap.gmail.com': ['mx.google.com'],
};

export function trustedAuthServIds(config: Pick<EmailConfig, 'trustedAuthServId' | 'imap'>): readonly string[] {
  return config.trustedAuthServId ?? KNOWN_PROVIDERS[config.imap.host.toLowerCase()] ?? [];
}
