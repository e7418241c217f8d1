import type { ConnectionTarget, ConnectionTestResult } from '../../../shared/api';
import type { AgentConfig } from '../agents/config-schema';
import { ircPlatformSchema } from '../config/schema';
import type { SecretStore } from '../secrets/secret-store';
import { testAgentConnection } from './agent-connection-test';
import { ircSettings } from './catalog';
import { IrcAdapter } from './irc/irc-adapter';

const DEFAULT_TIMEOUT_MS = 10_000;

export interface ConnectionTestDeps {
  readonly secrets: SecretStore;
  readonly env: NodeJS.ProcessEnv;
  /** How long a test may take before it says "no answer" (default 10 s). */
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
  /** The agent section in force: a saved API key is sent only to the server it was saved for. */
  readonly savedAgent?: AgentConfig;
}

/**
 * "Test connection" in the window: tries settings before they are saved, with
 * the same schema as config.json, and says what happened in plain words. It
 * never touches the running platforms (an IRC test is a second, short-lived
 * connection that quits at once).
 */
export async function testConnection(target: ConnectionTarget, config: unknown, deps: ConnectionTestDeps): Promise<ConnectionTestResult> {
  switch (target) {
    case 'irc':
      return testIrc(config, deps);
    case 'agent':
      return testAgentConnection(config, {
        secrets: deps.secrets,
        env: deps.env,
        timeoutMs: deps.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        ...(deps.savedAgent ? { savedAgent: deps.savedAgent } : {}),
        ...(deps.fetch ? { fetch: deps.fetch } : {}),
      });
  }
}

function schemaError(section: string, issues: readonly { path: readonly PropertyKey[]; message: string }[]): ConnectionTestResult {
  const issue = issues[0];
  const where = issue && issue.path.length > 0 ? `${section}.${issue.path.map(String).join('.')}` : section;
  return { ok: false, message: `${where}: ${issue?.message ?? 'invalid'}` };
}

async function testIrc(input: unknown, deps: ConnectionTestDeps): Promise<ConnectionTestResult> {
  const parsed = ircPlatformSchema.safeParse(input);
  if (!parsed.success) return schemaError('platforms.irc', parsed.error.issues);
  const { settings, password } = ircSettings(parsed.data, deps);
  const timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const adapter = new IrcAdapter({
    config: { ...settings, ...(password !== undefined ? { password } : {}), channels: [] },
    // One attempt only: a test that reconnects would hide the error it exists to show.
    reconnectDelayMs: () => 3_600_000,
    registerTimeoutMs: timeoutMs,
  });
  const where = `${settings.host}:${settings.port}${settings.tls ? ' (TLS)' : ''}`;
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
          resolve({ ok: false, message: `${where}: ${event.error ?? 'the server refused the login'}` });
        }
      });
      void adapter.connect();
    });
    return outcome;
  } finally {
    await adapter.disconnect().catch(() => undefined);
  }
}
