import { describe, expect, it } from 'vitest';
import { computeChunkKey } from '../../ledger/obligation-id';
import { toDiscordText } from './discord-text';
import { MAX_NONCE_LENGTH, nonceFor } from './nonce';
import { classifyFailure, toSendResult } from './send-errors';

describe('what a Discord send carries', () => {
  it('uses the ledger’s chunk key as the nonce, and a stable digest of any longer key', () => {
    const key = computeChunkKey('0123456789abcdef01234567', 2);
    expect(nonceFor(key)).toBe(key);
    const long = 'a'.repeat(40);
    expect(nonceFor(long)).toHaveLength(24);
    expect(nonceFor(long)).toBe(nonceFor(long));
    expect(nonceFor(long)).not.toBe(nonceFor('b'.repeat(40)));
    expect(nonceFor('with spaces and ünïcode').length).toBeLessThanOrEqual(MAX_NONCE_LENGTH);
  });

  it('escapes @everyone and @here without changing the length, and leaves the rest of the Markdown', () => {
    const text = '**Hi** @everyone and @here, `code`';
    const out = toDiscordText(text);
    expect(out).not.toMatch(/@(everyone|here)/);
    expect(out).toHaveLength(text.length);
    expect(out.startsWith('**Hi** ')).toBe(true);
  });
});

describe('a failed Discord call in plain words', () => {
  const apiError = (status: number, code: number, message: string) => Object.assign(new Error(message), { name: `DiscordAPIError[${code}]`, status, code, rawError: { message, code } });
  const redact = (text: string) => text;

  it('makes 50007, 10003 and 50013 permanent, with what to do', () => {
    expect(toSendResult(classifyFailure(apiError(403, 50007, 'Cannot send messages to this user'), redact))).toMatchObject({ permanent: true, retryable: false, notDelivered: true, error: expect.stringContaining('message this person') });
    expect(toSendResult(classifyFailure(apiError(404, 10003, 'Unknown Channel'), redact))).toMatchObject({ permanent: true, error: expect.stringContaining('does not know this channel') });
    expect(toSendResult(classifyFailure(apiError(403, 50013, 'Missing Permissions'), redact))).toMatchObject({ permanent: true, error: expect.stringContaining('Send Messages') });
  });

  it('says a rate limit handed back carries its wait, a 5xx or a timeout may have arrived, a refused connection did not', () => {
    const limited = Object.assign(new Error(''), { name: 'RateLimitError[/channels/:id/messages]', retryAfter: 300_000, route: '/channels/:id/messages', global: false });
    expect(toSendResult(classifyFailure(limited, redact))).toMatchObject({ retryable: true, permanent: false, notDelivered: true, retryAfterMs: 300_000 });
    const serverError = toSendResult(classifyFailure(apiError(502, 0, 'Bad Gateway'), redact));
    expect(serverError).toMatchObject({ retryable: true, permanent: false });
    expect(serverError).not.toHaveProperty('notDelivered');
    expect(toSendResult(classifyFailure(Object.assign(new Error('aborted'), { name: 'AbortError' }), redact))).not.toHaveProperty('notDelivered');
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    expect(toSendResult(classifyFailure(refused, redact))).toMatchObject({ notDelivered: true, retryable: true });
  });

  it('never shows the token', () => {
    const failure = classifyFailure(new Error('request with secret-token failed'), (text) => text.split('secret-token').join('[token]'));
    expect(failure.description).toBe('request with [token] failed');
  });
});
