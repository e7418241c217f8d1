import { describe, expect, it } from 'vitest';
import { classifyFailure, toSendResult } from './send-errors';

const redact = (text: string) => text.split('xoxb-secret').join('[token]');
const platformError = (error: string) => Object.assign(new Error(`An API error occurred: ${error}`), { code: 'slack_webapi_platform_error', data: { ok: false, error } });

describe('a failed Web API call, in the delivery side’s terms', () => {
  it('says permanent errors in plain words and does not retry them', () => {
    for (const [error, words] of [
      ['channel_not_found', 'Slack does not know this channel'],
      ['not_in_channel', 'the bot is not in this channel: invite it with /invite @your-app'],
      ['is_archived', 'the channel is archived'],
    ] as const) {
      const result = toSendResult(classifyFailure(platformError(error), redact));
      expect(result).toMatchObject({ ok: false, permanent: true, retryable: false, notDelivered: true });
      expect(!result.ok && result.error).toContain(words);
      expect(!result.ok && result.error).toContain(error);
    }
  });

  it('keeps a reply waiting (not failed) when a token is refused, and says what to do', () => {
    for (const error of ['invalid_auth', 'token_revoked']) {
      const failure = classifyFailure(platformError(error), redact);
      expect(failure.kind).toBe('unauthorized');
      expect(toSendResult(failure)).toMatchObject({ ok: false, retryable: true, permanent: false, notDelivered: true });
    }
  });

  it('fails a reply for good, in words, when the bot’s account is gone (account_inactive), and still counts it as a refused token', () => {
    const failure = classifyFailure(platformError('account_inactive'), redact);
    expect(failure.kind).toBe('unauthorized');
    expect(toSendResult(failure)).toMatchObject({ ok: false, retryable: false, permanent: true, notDelivered: true, error: expect.stringContaining('reinstall the app') });
  });

  it('takes a 429’s Retry-After, in seconds, as the wait', () => {
    const failure = classifyFailure(Object.assign(new Error('rate limited'), { code: 'slack_webapi_rate_limited_error', retryAfter: 30 }), redact);
    expect(failure).toMatchObject({ kind: 'rate-limited', retryAfterMs: 30_000 });
    expect(toSendResult(failure)).toMatchObject({ retryable: true, notDelivered: true, retryAfterMs: 30_000 });
  });

  it('counts a refused connection as not delivered, and a timeout or a 5xx as maybe delivered', () => {
    const refused = classifyFailure(Object.assign(new Error('A request error occurred'), { code: 'slack_webapi_request_error', original: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) }), redact);
    expect(toSendResult(refused)).toMatchObject({ notDelivered: true });
    const timeout = classifyFailure(Object.assign(new Error('A request error occurred'), { code: 'slack_webapi_request_error', original: Object.assign(new Error('timeout'), { code: 'ECONNABORTED' }) }), redact);
    expect(toSendResult(timeout)).not.toHaveProperty('notDelivered');
    const http = classifyFailure(Object.assign(new Error('An HTTP protocol error occurred'), { code: 'slack_webapi_http_error', statusCode: 503 }), redact);
    expect(toSendResult(http)).not.toHaveProperty('notDelivered');
    expect(toSendResult(classifyFailure(platformError('internal_error'), redact))).not.toHaveProperty('notDelivered');
  });

  it('never shows a token', () => {
    const failure = classifyFailure(new Error('bad thing with xoxb-secret inside'), redact);
    expect(failure.description).toBe('bad thing with [token] inside');
  });
});
