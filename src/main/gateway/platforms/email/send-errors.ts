import type { SendResult } from '../adapter';

/**
 * A failed SMTP send in the ledger's terms. The server's reply code decides:
 * 5xx is permanent (the same message would be refused again; 503, a command
 * out of sequence, is not), 4xx is transient and retried with the ledger's
 * backoff. Whether the message may have arrived decides the marker: a refusal
 * (any reply code) or a failure before the connection was up means it did
 * not; a connection lost or timed out later may have happened after the
 * server took the message, so the resend is marked.
 */
export function smtpFailure(error: unknown, redact: (text: string) => string): Extract<SendResult, { ok: false }> {
  const e = (error ?? {}) as { code?: unknown; responseCode?: unknown; command?: unknown; response?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const responseCode = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  const command = typeof e.command === 'string' ? e.command : undefined;
  const said = redact(String(typeof e.response === 'string' ? e.response : (e.message ?? error))).replace(/\s+/g, ' ').slice(0, 300);
  // Encryption asked for and not possible: the settings are wrong, not this message; fixed, it goes.
  if (code === 'ETLS' || command === 'STARTTLS') {
    return { ok: false, retryable: true, permanent: false, notDelivered: true, error: `the mail server did not set up encryption (${said}): check the SMTP port and encryption setting` };
  }
  if (responseCode !== undefined && responseCode >= 400) {
    const permanent = responseCode >= 500 && responseCode !== 503;
    const step = command ? ` at ${command.split(' ')[0]}` : '';
    if (code === 'EAUTH') {
      return { ok: false, retryable: true, permanent: false, notDelivered: true, error: loginRefused(said) };
    }
    return permanent
      ? { ok: false, retryable: false, permanent: true, notDelivered: true, error: `the mail server refused the message${step} for good: ${said}` }
      : { ok: false, retryable: true, permanent: false, notDelivered: true, error: `the mail server asked to try later${step}: ${said}` };
  }
  const beforeConnected = command === 'CONN' || code === 'EDNS' || code === 'ECONFIG' || code === 'ETLS' || code === 'ENOAUTH';
  // A wrong password is fixed in the settings, and then what waited goes out: retried, not given up.
  if (code === 'EAUTH' || code === 'ENOAUTH') return { ok: false, retryable: true, permanent: false, notDelivered: true, error: loginRefused(said) };
  return {
    ok: false,
    retryable: true,
    permanent: false,
    ...(beforeConnected ? { notDelivered: true } : {}),
    error: `cannot reach the mail server to send: ${said}`,
  };
}

function loginRefused(said: string): string {
  return `the mail server refused the login (${said}): check the SMTP user and password`;
}
