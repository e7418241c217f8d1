import type { ConnectionTestResult } from '../../../../shared/api';
import { boundedRequest } from './bounded-request';
import { loadDiscordJs, routes } from './load-discord-js';
import { classifyFailure } from './send-errors';

/** View Channels, Send Messages, Send Messages in Threads, Read Message History: what the bot needs in a channel. */
export const BOT_PERMISSIONS = (1n << 10n) | (1n << 11n) | (1n << 38n) | (1n << 16n);

/** The link that adds the bot to a server with the permissions it needs. */
export function inviteUrl(applicationId: string): string {
  return `https://discord.com/oauth2/authorize?client_id=${applicationId}&scope=bot&permissions=${BOT_PERMISSIONS}`;
}

/** "Test connection" for Discord: `GET /users/@me` with the saved token, naming the bot, its invite link and the intent to switch on. */
export async function testDiscordConnection(apiUrl: string, token: string | undefined, timeoutMs: number): Promise<ConnectionTestResult> {
  if (token === undefined) return { ok: false, message: 'no bot token is saved yet: paste the token from the Developer Portal (your application → Bot → Reset Token), then test again' };
  const redact = (text: string) => text.split(token).join('[token]');
  const { REST, DefaultRestOptions } = await loadDiscordJs();
  const rest = new REST({ api: apiUrl, timeout: timeoutMs, retries: 0, makeRequest: boundedRequest(DefaultRestOptions.makeRequest, 1024 * 1024) }).setToken(token);
  try {
    const me = (await rest.get(routes.me())) as { id?: unknown; username?: unknown; global_name?: unknown; bot?: unknown };
    const id = typeof me.id === 'string' && /^\d{1,20}$/.test(me.id) ? me.id : undefined;
    const name = typeof me.global_name === 'string' && me.global_name !== '' ? me.global_name : typeof me.username === 'string' ? me.username : '(no name)';
    if (me.bot !== true) return { ok: false, message: `this token belongs to ${name}, which is not a bot account: use the token of your application's bot` };
    return {
      ok: true,
      message:
        `connected to Discord as ${name}${id ? ` (id ${id})` : ''}. ` +
        `Switch on "Message Content Intent" in the Developer Portal (your application → Bot → Privileged Gateway Intents), ` +
        `then add the bot to a server: ${id ? inviteUrl(id) : 'OAuth2 → URL Generator, scope "bot"'}`,
    };
  } catch (error) {
    if (error instanceof Error && error.name === 'AbortError') return { ok: false, message: `no answer from ${apiUrl} within ${Math.round(timeoutMs / 1000)} s` };
    const failure = classifyFailure(error, redact);
    if (failure.kind === 'unauthorized') return { ok: false, message: `Discord refused the bot token (${failure.description}): copy it again from the Developer Portal (your application → Bot → Reset Token)` };
    return { ok: false, message: `${apiUrl}: ${failure.description}` };
  } finally {
    rest.clearHashSweeper();
    rest.clearHandlerSweeper();
  }
}
