import type { z } from 'zod';
import type { ConnectionTarget, ConnectionTestResult } from '../../../shared/api';
import type { AgentConfig } from '../agents/config-schema';
import { discordPlatformSchema, emailPlatformSchema, ircPlatformSchema, matrixPlatformSchema, telegramPlatformSchema, xmppPlatformSchema, type HomingConfig } from '../config/schema';
import type { SecretStore } from '../secrets/secret-store';
import { testAgentConnection } from './agent-connection-test';
import { discordSettings, emailSettings, ircSettings, matrixSettings, telegramSettings, xmppSettings } from './catalog';
import { testDiscordConnection } from './discord/connection-test';
import { testEmailConnection } from './email/connection-test';
import { testMatrixConnection } from './matrix/connection-test';
import { testTelegramConnection } from './telegram/connection-test';
import { IrcAdapter } from './irc/irc-adapter';
import { testXmppConnection } from './xmpp/connection-test';

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
    case 'telegram': {
      const parsed = telegramPlatformSchema.safeParse(config);
      if (!parsed.success) return schemaError('platforms.telegram', parsed.error.issues);
      const saved = deps.savedConfig?.platforms.telegram;
      const savedRoot = saved?.apiRoot ?? 'https://api.telegram.org';
      // The token (and the variable holding it) come from the saved section, and go only to the API they were saved for.
      const { token } = saved ? telegramSettings(saved, deps) : { token: deps.secrets.get('telegram.token') };
      if (parsed.data.apiRoot !== savedRoot && token !== undefined) {
        return { ok: false, message: `the saved bot token was not sent: it was saved for ${savedRoot}; save the settings first` };
      }
      return testTelegramConnection(parsed.data.apiRoot, token, deps.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    }
    case 'matrix': {
      const parsed = matrixPlatformSchema.safeParse(config);
      if (!parsed.success) return schemaError('platforms.matrix', parsed.error.issues);
      const saved = deps.savedConfig?.platforms.matrix;
      // The token or password comes from the saved section and goes only to the homeserver (and user) it was saved for.
      const { credentials } = saved ? matrixSettings(saved, deps) : matrixSettings({ ...parsed.data, accessTokenEnv: undefined, passwordEnv: undefined }, deps);
      if (credentials !== undefined && saved && (saved.homeserver !== parsed.data.homeserver || saved.user !== parsed.data.user)) {
        return { ok: false, message: `the saved access token or password was not sent: it was saved for ${saved.user} on ${saved.homeserver}; save the settings first` };
      }
      return testMatrixConnection(parsed.data.homeserver, parsed.data.user, credentials, deps.timeoutMs ?? DEFAULT_TIMEOUT_MS, deps.fetch ?? fetch);
    }
    case 'email': {
      const parsed = emailPlatformSchema.safeParse(config);
      if (!parsed.success) return schemaError('platforms.email', parsed.error.issues);
      const { settings } = emailSettings(parsed.data, deps);
      // The password comes from the saved section and goes only to the servers it was saved for.
      const saved = deps.savedConfig?.platforms.email;
      // Nothing saved yet (a first setup): the password just entered in the window.
      const { password } = saved ? emailSettings(saved, deps) : { password: deps.secrets.get('email.password') };
      const sameServers =
        saved === undefined ||
        (saved.imap.host.toLowerCase() === settings.imap.host.toLowerCase() &&
        saved.smtp.host.toLowerCase() === settings.smtp.host.toLowerCase() &&
        (saved.imap.security === 'none' || settings.imap.security !== 'none') &&
        (saved.smtp.security === 'none' || settings.smtp.security !== 'none'));
      if (password !== undefined && !sameServers) {
        return { ok: false, message: `the saved password was not sent: it was saved for ${saved!.imap.host} and ${saved!.smtp.host}${saved!.imap.security === 'none' ? '' : ' with encryption'}; save the settings first` };
      }
      return testEmailConnection(settings, password, deps.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    }
    case 'discord': {
      const parsed = discordPlatformSchema.safeParse(config);
      if (!parsed.success) return schemaError('platforms.discord', parsed.error.issues);
      const saved = deps.savedConfig?.platforms.discord;
      const savedUrl = saved?.apiUrl ?? 'https://discord.com/api';
      // The token (and the variable holding it) come from the saved section, and go only to the API they were saved for.
      const { token } = saved ? discordSettings(saved, deps) : { token: deps.secrets.get('discord.token') };
      if (parsed.data.apiUrl !== savedUrl && token !== undefined) {
        return { ok: false, message: `the saved bot token was not sent: it was saved for ${savedUrl}; save the settings first` };
      }
      return testDiscordConnection(parsed.data.apiUrl, token, deps.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    }
    case 'xmpp':
      return testXmpp(config, deps);
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
 * XMPP: the saved password goes only to the account and server it was saved
 * for (the same JID, host and port, and not in plain text if it was saved for
 * an encrypted connection); the variable holding it comes from the saved section.
 */
async function testXmpp(input: unknown, deps: ConnectionTestDeps): Promise<ConnectionTestResult> {
  const parsed = xmppPlatformSchema.safeParse(input);
  if (!parsed.success) return schemaError('platforms.xmpp', parsed.error.issues);
  const { settings } = xmppSettings(parsed.data, { env: {}, secrets: { get: () => undefined, set: () => {}, delete: () => {}, names: () => [] } });
  const saved = deps.savedConfig?.platforms.xmpp;
  let password: string | undefined;
  let note = '';
  if (saved) {
    const same =
      saved.jid === settings.jid &&
      (saved.host ?? '') === (settings.host ?? '') &&
      (saved.port ?? 0) === (settings.port ?? 0) &&
      (settings.security !== 'none' || saved.security === 'none');
    const savedPassword = xmppSettings(saved, deps).password;
    if (same) password = savedPassword;
    else if (savedPassword !== undefined) note = ` (the saved password was not sent: it was saved for ${saved.jid}${saved.host ? ` on ${saved.host}` : ''}${saved.security !== 'none' ? ' with encryption' : ''}; save the settings first)`;
  } else {
    password = deps.secrets.get('xmpp.password');
  }
  return testXmppConnection(settings, password, deps.timeoutMs ?? DEFAULT_TIMEOUT_MS, note);
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
