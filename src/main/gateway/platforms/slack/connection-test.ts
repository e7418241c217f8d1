import type { ConnectionTestResult } from '../../../../shared/api';
import { silentLogger } from '../../logger';
import { classifyFailure } from './send-errors';
import { newWebClient } from './slack-clients';

/**
 * "Test connection" for Slack: `auth.test` with the bot token (naming the bot
 * and the workspace) and `apps.connections.open` with the app-level token (Socket
 * Mode switched on, the token has `connections:write`); the URL it returns is
 * single-use and never connected to.
 */
export async function testSlackConnection(apiUrl: string, appToken: string | undefined, botToken: string | undefined, timeoutMs: number): Promise<ConnectionTestResult> {
  if (botToken === undefined) return { ok: false, message: 'no bot token is saved yet: paste the bot token (xoxb-…, OAuth & Permissions at api.slack.com/apps), then test again' };
  if (appToken === undefined) return { ok: false, message: 'no app-level token is saved yet: paste it (xapp-…, Basic Information → App-Level Tokens, scope connections:write), then test again' };
  const redact = (text: string) => text.split(botToken).join('[token]').split(appToken).join('[token]');
  const deadline = Math.max(1_000, timeoutMs - 500);
  try {
    const web = await newWebClient(botToken, apiUrl, deadline, silentLogger, redact);
    const me = (await web.auth.test()) as { user?: unknown; user_id?: unknown; team?: unknown; bot_id?: unknown };
    const name = typeof me.user === 'string' ? me.user.slice(0, 80) : '(no name)';
    const team = typeof me.team === 'string' ? me.team.slice(0, 80) : '(no name)';
    if (typeof me.bot_id !== 'string') return { ok: false, message: `this token belongs to ${name}, a person, not a bot: use the bot token (xoxb-…)` };
    const socket = await newWebClient(appToken, apiUrl, deadline, silentLogger, redact);
    try {
      await socket.apps.connections.open({});
    } catch (error) {
      const failure = classifyFailure(error, redact);
      return { ok: false, message: `connected as ${name} in ${team}, but the app-level token does not open Socket Mode (${failure.description}): switch on Socket Mode (api.slack.com/apps → your app → Socket Mode) and paste an app-level token with the connections:write scope` };
    }
    return { ok: true, message: `connected to Slack as ${name} in the workspace ${team}; Socket Mode is on. Invite the bot into a channel with /invite @${name}, or write to it directly.` };
  } catch (error) {
    const failure = classifyFailure(error, redact);
    if (failure.kind === 'unauthorized') return { ok: false, message: `Slack refused the bot token (${failure.description}): copy it again (api.slack.com/apps → your app → OAuth & Permissions)` };
    if (/timeout|ECONNABORTED/i.test(failure.description)) return { ok: false, message: `no answer from ${apiUrl} within ${Math.round(timeoutMs / 1000)} s` };
    return { ok: false, message: `${apiUrl}: ${failure.description}` };
  }
}
