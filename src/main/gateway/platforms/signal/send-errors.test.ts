import { describe, expect, it } from 'vitest';
import { RpcClosedError, RpcError } from './json-rpc-connection';
import { classifySendFailure, toSendResult } from './send-errors';

const response = (results: object[]) => ({ response: { timestamp: 1, results } });

describe('signal-cli send errors in plain words', () => {
  it('waits out a rate limit for the seconds Signal names, the message surely not sent', () => {
    const result = toSendResult(classifySendFailure(new RpcError(-5, 'Failed to send message due to rate limiting', response([{ type: 'RATE_LIMIT_FAILURE', retryAfterSeconds: 7 }]))));
    expect(result).toMatchObject({ ok: false, retryable: true, permanent: false, notDelivered: true, retryAfterMs: 7_000 });
  });

  it('fails for good, in words, an untrusted safety number, an unregistered person and a group the account left', () => {
    const untrusted = toSendResult(classifySendFailure(new RpcError(-4, 'Failed to send message due to untrusted identities', response([{ type: 'IDENTITY_FAILURE' }]))));
    expect(untrusted).toMatchObject({ ok: false, permanent: true, retryable: false });
    expect(!untrusted.ok && untrusted.error).toContain('safety number changed');
    const unregistered = toSendResult(classifySendFailure(new RpcError(-1, 'The user +15550000009 is not registered.', null)));
    expect(!unregistered.ok && unregistered.error).toContain('not (or no longer) on Signal');
    expect(!unregistered.ok && unregistered.error).not.toContain('+15550000009');
    const left = toSendResult(classifySendFailure(new RpcError(-1, 'User is not a member in group: Family (abc=)', null)));
    expect(!left.ok && left.error).toContain('not in this group');
  });

  it('counts a lost connection or an I/O error as maybe sent (its resend is marked)', () => {
    for (const error of [new RpcClosedError('signal-cli closed the connection'), new RpcError(-3, 'Failed to send message: timeout', null), new RpcError(-32603, 'Failed to send message: x (IOException)', null)]) {
      const result = toSendResult(classifySendFailure(error));
      expect(result).toMatchObject({ ok: false, retryable: true, permanent: false });
      expect(result).not.toHaveProperty('notDelivered');
    }
  });

  it('says a captcha challenge needs the person at the keyboard', () => {
    const result = toSendResult(classifySendFailure(new RpcError(-5, 'Failed to send message due to rate limiting', response([{ type: 'RATE_LIMIT_FAILURE', token: 'abc' }]))));
    expect(result).toMatchObject({ permanent: true });
    expect(!result.ok && result.error).toContain('submitRateLimitChallenge');
  });
});
