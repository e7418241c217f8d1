/**
 * IMAP failures as imapflow reports them: the server's response code
 * (RFC 5530: `AUTHENTICATIONFAILED`, `NONEXISTENT`) and its words.
 */

export function responseCode(error: unknown): string | undefined {
  const code = (error as { serverResponseCode?: unknown } | undefined)?.serverResponseCode;
  return typeof code === 'string' ? code.toUpperCase() : undefined;
}

export function isAuthFailure(error: unknown): boolean {
  return (error as { authenticationFailed?: unknown } | undefined)?.authenticationFailed === true || responseCode(error) === 'AUTHENTICATIONFAILED';
}

/** The failure in words: the server's text where it said one, with the error code. Not redacted: callers redact. */
export function imapWords(error: unknown): string {
  const e = error as { code?: unknown; responseText?: unknown } | undefined;
  const text = typeof e?.responseText === 'string' ? e.responseText : error instanceof Error ? error.message : String(error);
  return typeof e?.code === 'string' && !text.includes(e.code) ? `${text} (${e.code})` : text;
}

/**
 * The folder does not exist: RFC 5530's `NONEXISTENT`, or what imapflow makes
 * of a SELECT or EXAMINE refused without a code (dovecot answers EXAMINE of a
 * missing folder with a plain `NO Mailbox doesn't exist`), its `mailboxMissing`.
 */
export function isMissingFolder(error: unknown): boolean {
  return (error as { mailboxMissing?: unknown } | undefined)?.mailboxMissing === true || responseCode(error) === 'NONEXISTENT';
}
