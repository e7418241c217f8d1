import type { ConnectionTestResult } from '../../../../shared/api';
import { MatrixClient, type MatrixFailure } from './client';
import type { MatrixCredentials } from './matrix-adapter';

/**
 * "Test connection" for Matrix: `/account/whoami` with the saved access token;
 * with a password, a login on a short-lived device of its own, whoami, and a
 * logout that removes that device again (the bot's own device is left alone).
 */
export async function testMatrixConnection(
  homeserver: string,
  user: string,
  credentials: MatrixCredentials | undefined,
  timeoutMs: number,
  fetchImpl: typeof fetch = fetch,
): Promise<ConnectionTestResult> {
  if (credentials === undefined) return { ok: false, message: 'no access token or password is saved yet: enter one, save, then test again' };
  const client = new MatrixClient(homeserver, fetchImpl);
  let token: string;
  let temporary = false;
  if ('accessToken' in credentials) {
    token = credentials.accessToken;
  } else {
    const login = await client.call<{ access_token?: unknown }>('POST', 'v3/login', {
      body: { type: 'm.login.password', identifier: { type: 'm.id.user', user }, password: credentials.password, initial_device_display_name: 'Homing (connection test)' },
      timeoutMs,
    });
    if (!login.ok) return { ok: false, message: words(homeserver, login.failure, 'password') };
    if (typeof login.value.access_token !== 'string') return { ok: false, message: `${homeserver}: the login answer has no access token` };
    token = login.value.access_token;
    temporary = true;
  }
  try {
    const whoami = await client.call<{ user_id?: unknown; device_id?: unknown }>('GET', 'v3/account/whoami', { token, timeoutMs });
    if (!whoami.ok) return { ok: false, message: words(homeserver, whoami.failure, 'token') };
    const userId = typeof whoami.value.user_id === 'string' ? whoami.value.user_id.slice(0, 255) : '(unknown)';
    const device = !temporary && typeof whoami.value.device_id === 'string' ? ` (device ${whoami.value.device_id.slice(0, 64)})` : '';
    return { ok: true, message: `connected to ${homeserver} as ${userId}${device}` };
  } finally {
    if (temporary) await client.call('POST', 'v3/logout', { token, body: {}, timeoutMs }).catch(() => undefined);
  }
}

function words(homeserver: string, failure: MatrixFailure, what: 'token' | 'password'): string {
  switch (failure.kind) {
    case 'unauthorized':
      return `the homeserver refused the access token (${failure.description}): it was revoked or has expired; paste a new one`;
    case 'forbidden':
      return what === 'password' ? `the homeserver refused the login (${failure.description}): check the user and password` : `${homeserver}: ${failure.description}`;
    case 'rate-limited':
      return `the homeserver asks to wait ${Math.ceil(failure.retryAfterMs / 1000)} s before trying again`;
    case 'not-found':
      return `${homeserver} does not answer like a Matrix homeserver (${failure.description}): give the client-server address, e.g. https://matrix.example.org`;
    default:
      return `${homeserver}: ${failure.description}`;
  }
}
