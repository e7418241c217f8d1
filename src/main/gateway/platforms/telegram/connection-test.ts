import type { ConnectionTestResult } from '../../../../shared/api';
import { loadGrammy } from './load-grammy';
import { classifyFailure } from './send-errors';

/** "Test connection" for Telegram: `getMe` with the saved token, naming the bot it belongs to. */
export async function testTelegramConnection(apiRoot: string, token: string | undefined, timeoutMs: number): Promise<ConnectionTestResult> {
  if (token === undefined) return { ok: false, message: 'no bot token is saved yet: paste the token @BotFather gave you, then test again' };
  const redact = (text: string) => text.split(token).join('[token]');
  const { Api } = await loadGrammy();
  const api = new Api(token, { apiRoot, timeoutSeconds: Math.max(1, Math.ceil(timeoutMs / 1000)) });
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    const me = await api.getMe(abort.signal as never);
    const groups = me.can_read_all_group_messages ? 'it sees every group message (privacy mode off)' : 'in groups it sees only messages addressed to it (privacy mode on)';
    return { ok: true, message: `connected to Telegram as @${me.username} (${me.first_name}); ${groups}` };
  } catch (error) {
    if (abort.signal.aborted) return { ok: false, message: `no answer from ${apiRoot} within ${Math.round(timeoutMs / 1000)} s` };
    const failure = classifyFailure(error, redact);
    if (failure.kind === 'unauthorized') return { ok: false, message: `Telegram refused the bot token (${failure.description}): copy it again from @BotFather` };
    return { ok: false, message: `${apiRoot}: ${failure.description}` };
  } finally {
    clearTimeout(timer);
  }
}
