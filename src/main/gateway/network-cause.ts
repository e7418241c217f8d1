/**
 * Why a connection failed, in words a user can act on: the name did not
 * resolve (DNS), nothing listens there (refused), the TLS handshake or
 * certificate failed, no answer. Node's errors carry a code, often wrapped
 * (undici: `TypeError('fetch failed', { cause })`, sometimes an AggregateError
 * of one error per address).
 */
const CAUSES: Record<string, string> = {
  ENOTFOUND: 'DNS: the host name does not exist',
  EAI_AGAIN: 'DNS: the host name could not be looked up (no network, or no DNS server answering)',
  EAI_FAIL: 'DNS: the host name could not be looked up',
  ECONNREFUSED: 'connection refused: nothing listens there (is the server running?)',
  ECONNRESET: 'the connection was reset',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  UND_ERR_SOCKET: 'the connection closed',
  UND_ERR_HEADERS_TIMEOUT: 'no answer',
  CERT_HAS_EXPIRED: 'TLS: the server’s certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS: the server’s certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS: the server’s certificate chain is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS: the server’s certificate cannot be verified',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'TLS: the server’s certificate cannot be verified',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS: the certificate is for another host name',
  ERR_SSL_WRONG_VERSION_NUMBER: 'TLS: the server does not speak TLS on that port',
  EPROTO: 'TLS: the handshake failed',
};

/** The first error code found in `error` or what it wraps. */
export function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const { code, errors, cause } = e as { code?: unknown; errors?: unknown; cause?: unknown };
    if (typeof code === 'string') return code;
    e = Array.isArray(errors) && errors.length > 0 ? errors[0] : cause;
  }
  return undefined;
}

/** The cause in words (with the code), or undefined when the error carries no code we know. */
export function networkCause(error: unknown): string | undefined {
  const code = errorCode(error);
  if (code === undefined) return undefined;
  const words = CAUSES[code];
  return words ? `${words} (${code})` : code;
}
