import { GrammyError, HttpError } from 'grammy';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadGrammy } from './load-grammy';
import { classifyFailure, toSendResult } from './send-errors';

const TOKEN = '123456789:AAFakeTokenForTestsOnly_abcdefghijk';
const redact = (text: string) => text.split(TOKEN).join('[token]');
const api = (error_code: number, description: string, parameters: Record<string, unknown> = {}) =>
  new GrammyError('call failed', { ok: false, error_code, description, parameters }, 'sendMessage', {});

describe('Telegram failures in the delivery side’s terms', () => {
  // The adapter loads grammY before its first call; its errors are recognised once it is loaded.
  beforeAll(() => loadGrammy());

  it('makes blocked, kicked, deactivated and chat-not-found permanent, with a reason in plain words', () => {
    const cases: [GrammyError, RegExp][] = [
      [api(403, 'Forbidden: bot was blocked by the user'), /^the person blocked the bot/],
      [api(403, 'Forbidden: bot was kicked from the group chat'), /^the bot was removed from this chat/],
      [api(403, 'Forbidden: user is deactivated'), /account was deleted/],
      [api(400, 'Bad Request: chat not found'), /^Telegram does not know this chat/],
    ];
    for (const [error, words] of cases) {
      const result = toSendResult(classifyFailure(error, redact));
      expect(result).toMatchObject({ ok: false, permanent: true, retryable: false, notDelivered: true });
      expect(!result.ok && result.error).toMatch(words);
    }
  });

  it('reads 429 retry_after, a migration, a markup error and a gone topic', () => {
    expect(classifyFailure(api(429, 'Too Many Requests: retry after 7', { retry_after: 7 }), redact)).toMatchObject({ kind: 'rate-limited', retryAfterMs: 7000 });
    expect(classifyFailure(api(400, 'Bad Request: group chat was upgraded to a supergroup chat', { migrate_to_chat_id: -1001 }), redact)).toMatchObject({ kind: 'migrated', to: '-1001' });
    expect(classifyFailure(api(400, "Bad Request: can't parse entities: Unsupported start tag"), redact).kind).toBe('markup');
    expect(classifyFailure(api(400, 'Bad Request: message thread not found'), redact).kind).toBe('thread-gone');
    expect(classifyFailure(api(401, 'Unauthorized'), redact).kind).toBe('unauthorized');
    expect(classifyFailure(api(409, 'Conflict: terminated by other getUpdates request'), redact).kind).toBe('conflict');
  });

  it("tells a webhook's 409 from another poller's (telegram-bot-api's two Conflict descriptions)", () => {
    const active = "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first";
    expect(classifyFailure(api(409, active), redact).kind).toBe('webhook');
    expect(classifyFailure(api(409, 'Conflict: terminated by setWebhook request'), redact).kind).toBe('webhook');
    expect(classifyFailure(api(409, 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running'), redact).kind).toBe('conflict');
  });

  it('treats no answer as "may have arrived" (a resend is marked), and never shows the token', () => {
    const failure = classifyFailure(new HttpError(`Network request for 'sendMessage' failed! https://api.telegram.org/bot${TOKEN}/sendMessage`, new Error(`connect ECONNREFUSED (bot${TOKEN})`)), redact);
    const result = toSendResult(failure);
    expect(result).toMatchObject({ ok: false, retryable: true, permanent: false });
    expect(result.ok || result.notDelivered).toBeFalsy();
    expect(JSON.stringify(result)).not.toContain(TOKEN);
    expect(toSendResult(classifyFailure(api(502, 'Bad Gateway'), redact))).not.toHaveProperty('notDelivered');
  });

  it('reads a broken envelope (no code, no description) as a refusal in words, never a throw', () => {
    const broken = new GrammyError('call failed', { ok: false } as never, 'getUpdates', {});
    expect(classifyFailure(broken, redact)).toMatchObject({ kind: 'refused', description: '0 (no description)' });
  });
});

