import type { ConnectionTestResult } from '../../../../shared/api';
import type { ConnectionTestDeps } from '../platform-module';
import { secretFrom } from '../platform-module';
import type { IrcPlatformSection } from './config-schema';
import { IrcAdapter } from './irc-adapter';

/**
 * "Test connection" for IRC: a second, short-lived connection with the settings
 * under test, which quits once the server has registered it (or refused it).
 */
export async function testIrcConnection(tested: IrcPlatformSection, deps: ConnectionTestDeps<IrcPlatformSection>): Promise<ConnectionTestResult> {
  const { enabled: _enabled, passwordEnv: _passwordEnv, password: _never, ...settings } = tested;
  const { password, withheld } = savedIrcPassword(tested, deps);
  const timeoutMs = deps.timeoutMs;
  const adapter = new IrcAdapter({
    config: { ...settings, ...(password !== undefined ? { password } : {}), channels: [] },
    // One attempt only: a test that reconnects would hide the error it exists to show.
    reconnectDelayMs: () => 3_600_000,
    registerTimeoutMs: timeoutMs,
  });
  const where = `${settings.host}:${settings.port}${settings.tls ? ' (TLS)' : ''}`;
  const note = withheld ? ` (the saved server password was not sent: it was saved for ${withheld})` : '';
  try {
    const outcome = await new Promise<ConnectionTestResult>((resolve) => {
      const timer = setTimeout(() => resolve({ ok: false, message: `no answer from ${where} within ${Math.round(timeoutMs / 1000)} s` }), timeoutMs);
      adapter.onEvent((event) => {
        if (event.type !== 'state') return;
        if (event.state === 'connected') {
          clearTimeout(timer);
          resolve({ ok: true, message: `connected to ${where} as ${adapter.currentNick() ?? settings.nick}` });
        } else if (event.state === 'auth-failed' || (event.state === 'disconnected' && event.error)) {
          clearTimeout(timer);
          resolve({ ok: false, message: `${where}: ${event.error ?? 'the server refused the login'}${note}` });
        }
      });
      void adapter.connect();
    });
    return outcome.ok || !note || outcome.message.endsWith(note) ? outcome : { ...outcome, message: `${outcome.message}${note}` };
  } finally {
    await adapter.disconnect().catch(() => undefined);
  }
}

/**
 * The saved IRC server password, if the settings under test name the server it
 * was saved for: the same host and port, and TLS if it was saved with TLS. The
 * form under test is not saved yet and may name any host, or plain text; the
 * password (and the environment variable holding it) comes from the saved
 * section, never from the form, so a form cannot read an arbitrary variable.
 */
function savedIrcPassword(tested: IrcPlatformSection, deps: ConnectionTestDeps<IrcPlatformSection>): { password?: string; withheld?: string } {
  const saved = deps.savedSection;
  if (!saved) return {};
  const password = secretFrom(deps, saved.passwordEnv, 'irc.password');
  if (password === undefined) return {};
  const sameServer = saved.host.toLowerCase() === tested.host.toLowerCase() && saved.port === tested.port;
  if (sameServer && (tested.tls || !saved.tls)) return { password };
  return { withheld: `${saved.host}:${saved.port}${saved.tls ? ' with TLS' : ''}` };
}
