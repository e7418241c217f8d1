import type { ConnectionTestResult } from '../../../../shared/api';
import type { XmppConfig } from './config-schema';
import { XmppAdapter } from './xmpp-adapter';

/**
 * "Test connection" for XMPP: logs in with the settings under test (no rooms,
 * one attempt) and out again, naming what the server agreed to.
 */
export async function testXmppConnection(config: XmppConfig, password: string | undefined, timeoutMs: number, note = ''): Promise<ConnectionTestResult> {
  if (password === undefined) return { ok: false, message: `no password is saved for ${config.jid} yet: enter it, then test again${note}` };
  const adapter = new XmppAdapter({
    config: { ...config, rooms: {} },
    password,
    // One attempt only: a test that reconnects would hide the error it exists to show.
    reconnectDelayMs: () => 3_600_000,
    loginTimeoutMs: timeoutMs,
  });
  try {
    return await new Promise<ConnectionTestResult>((resolve) => {
      const timer = setTimeout(() => resolve({ ok: false, message: `no login at ${adapter.describeAccount()} within ${Math.round(timeoutMs / 1000)} s${note}` }), timeoutMs);
      adapter.onEvent((event) => {
        if (event.type !== 'state') return;
        if (event.state === 'connected') {
          clearTimeout(timer);
          // Stream management is enabled just after the login: give it a moment to answer.
          setTimeout(() => {
            const sm = adapter.streamManagementOn() ? 'stream management on' : 'no stream management (XEP-0198) on this server: a dropped connection may lose a reply’s confirmation';
            const security = config.security === 'none' ? 'not encrypted' : 'encrypted';
            resolve({ ok: true, message: `logged in as ${adapter.describeAccount()} (${security}; ${sm}) and out again` });
          }, 300);
        } else if (event.state === 'auth-failed' || (event.state === 'disconnected' && event.error)) {
          clearTimeout(timer);
          resolve({ ok: false, message: `${adapter.describeAccount()}: ${event.error ?? 'the server refused the login'}${note}` });
        }
      });
      void adapter.connect();
    });
  } finally {
    await adapter.disconnect().catch(() => undefined);
  }
}
