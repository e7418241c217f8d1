import type { z } from 'zod';
import type { ConnectionTarget, ConnectionTestResult } from '../../../shared/api';
import { agentConfigSchema } from '../agents/config-schema';
import { createAgent } from '../agents/create-agent';
import { ircPlatformSchema, type HomingConfig } from '../config/schema';
import type { SecretStore } from '../secrets/secret-store';
import { ircSettings } from './catalog';
import { IrcAdapter } from './irc/irc-adapter';

const DEFAULT_TIMEOUT_MS = 10_000;

export interface ConnectionTestDeps {
  readonly secrets: SecretStore;
  readonly env: NodeJS.ProcessEnv;
  /** How long a test may take before it says "no answer" (default 10 s). */
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
  /**
   * The configuration the saved secrets belong to (the running one). A saved
   * secret is sent only to the server it was saved for; without this, none is.
   */
  readonly savedConfig?: Pick<HomingConfig, 'platforms'>;
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
      return testAgent(config, deps);
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
  const { settings } = ircSettings(parsed.data, deps);
  const { password, withheld } = savedIrcPassword(parsed.data, deps);
  const timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
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
function savedIrcPassword(
  tested: z.output<typeof ircPlatformSchema>,
  deps: ConnectionTestDeps,
): { password?: string; withheld?: string } {
  const saved = deps.savedConfig?.platforms.irc;
  if (!saved) return {};
  const { password } = ircSettings(saved, deps);
  if (password === undefined) return {};
  const sameServer = saved.host.toLowerCase() === tested.host.toLowerCase() && saved.port === tested.port;
  if (sameServer && (tested.tls || !saved.tls)) return { password };
  return { withheld: `${saved.host}:${saved.port}${saved.tls ? ' with TLS' : ''}` };
}

async function testAgent(input: unknown, deps: ConnectionTestDeps): Promise<ConnectionTestResult> {
  const parsed = agentConfigSchema.safeParse(input);
  if (!parsed.success) return schemaError('agent', parsed.error.issues);
  const config = parsed.data;
  const apiKey = deps.secrets.get('agent.apiKey');
  const built = createAgent(config, { env: deps.env, ...(apiKey !== undefined ? { apiKey } : {}) });
  if (!built.ok) return { ok: false, message: built.error };
  await built.agent.close().catch(() => undefined);
  switch (config.type) {
    case 'builtin':
      return { ok: true, message: 'the built-in agent needs nothing: it is ready' };
    case 'command':
    case 'acp':
      return { ok: true, message: `the settings are valid; ${config.command} is started for each turn` };
    case 'openai':
      // The key the agent would use: the secret store's, else the environment variable the config names.
      return probeOpenAi(config.baseUrl, config.model, apiKey ?? (config.apiKeyEnv ? deps.env[config.apiKeyEnv] : undefined), deps);
  }
}

async function probeOpenAi(baseUrl: string, model: string, apiKey: string | undefined, deps: ConnectionTestDeps): Promise<ConnectionTestResult> {
  const url = `${baseUrl.replace(/\/+$/, '')}/models`;
  try {
    const response = await (deps.fetch ?? fetch)(url, {
      signal: AbortSignal.timeout(deps.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      ...(apiKey ? { headers: { authorization: `Bearer ${apiKey}` } } : {}),
    });
    if (response.status === 401 || response.status === 403) return { ok: false, message: `${baseUrl} refused the API key (${response.status})` };
    if (!response.ok) return { ok: false, message: `${url} answered ${response.status}` };
    const body = (await response.json().catch(() => ({}))) as { data?: { id?: unknown }[] };
    const models = Array.isArray(body.data) ? body.data.map((entry) => entry.id).filter((id) => typeof id === 'string') : [];
    if (models.length > 0 && !models.includes(model)) {
      return { ok: false, message: `${baseUrl} answers, but has no model ${model} (it has ${models.slice(0, 5).join(', ')})` };
    }
    return { ok: true, message: `${baseUrl} answers${models.length > 0 ? ` and has ${model}` : ''}` };
  } catch (error) {
    return { ok: false, message: `nothing answers at ${baseUrl}: ${error instanceof Error ? error.message : String(error)}` };
  }
}
