import { describe, expect, it } from 'vitest';
import { networkCause } from './network-cause';

function coded(code: string): Error {
  return Object.assign(new Error(code), { code });
}

describe('networkCause', () => {
  it('puts the usual connection failures in words, however the error is wrapped', () => {
    expect(networkCause(coded('ENOTFOUND'))).toBe('DNS: the host name does not exist (ENOTFOUND)');
    expect(networkCause(new TypeError('fetch failed', { cause: coded('EAI_AGAIN') }))).toMatch(/^DNS: .* \(EAI_AGAIN\)$/);
    expect(networkCause(new TypeError('fetch failed', { cause: new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]) }))).toMatch(/^connection refused/);
    expect(networkCause(new TypeError('fetch failed', { cause: coded('CERT_HAS_EXPIRED') }))).toMatch(/^TLS: .*expired/);
  });

  it('gives an unknown code as it is, and nothing for an error without one', () => {
    expect(networkCause(coded('EWHATEVER'))).toBe('EWHATEVER');
    expect(networkCause(new Error('plain'))).toBeUndefined();
    expect(networkCause('a string')).toBeUndefined();
  });
});
