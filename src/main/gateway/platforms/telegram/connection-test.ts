import type { ConnectionTestResult } from '../../../../shared/api';
import { networkCause } from '../../network-cause';
import { loadedGrammy, loadGrammy } from './load-grammy';
import { classifyFailure } from './send-errors';

/** "Test connection" for Telegram: `getMe` with the saved token, naming the bot it belongs to. */
export async function testTelegramConnection(apiRoot: string, token: string | undefined, timeoutMs: number): Promise<ConnectionTestResult> {
  if (token === undefined) return { ok: false, message: 'no bot token is saved yet: paste the token @BotFather gave you, then test again' };
  const redact = (text: string) => text.split(token).join('[token]');
  const { Api } = await loadGrammy();
  const api = new Api(token, { apiRoot, timeoutSeconds: Math.max(1, Math.ceil(timeoutMs / 1000)) });
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  // The abort does not reach a DNS lookup in progress (getaddrinfo runs to its end: ~20 s
  // with no DNS server answering), so the answer does not wait for the call either.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new Error('deadline'));
    }, timeoutMs);
  });
  try {
    const me = await Promise.race([api.getMe(abort.signal as never), deadline]);
    const groups = me.can_read_all_group_messages ? 'it sees every group message (privacy mode off)' : 'in groups it sees only messages addressed to it (privacy mode on)';
    return { ok: true, message: `connected to Telegram as @${me.username} (${me.first_name}); ${groups}` };
  } catch (error) {
    if (abort.signal.aborted) return { ok: false, message: `no answer from ${apiRoot} within ${Math.round(timeoutMs / 1000)} s` };
    const failure = classifyFailure(error, redact);
    if (failure.kind === 'unauthorized') return { ok: false, message: `Telegram refused the bot token (${failure.description}): copy it again from @BotFather` };
    const grammy = loadedGrammy();
    const cause = networkCause(grammy && error instanceof grammy.HttpError ? error.error : error);
    return { ok: false, message: cause ? `cannot reach ${apiRoot}: ${cause}` : `${apiRoot}: ${failure.description}` };
  } finally {
    clearTimeout(timer);
  }
}
