import { describe, expect, it } from 'vitest';
import { stanzaErrorResult } from './send-errors';

describe('XMPP stanza errors for a sent chunk', () => {
  const result = (condition: string, type = 'cancel') => stanzaErrorResult({ condition, type, text: undefined }, 'bob@example.org');

  it('makes a closed or missing address permanent, in words, with the condition named', () => {
    for (const condition of ['item-not-found', 'forbidden', 'not-allowed', 'registration-required']) {
      expect(result(condition)).toMatchObject({ ok: false, retryable: false, permanent: true, notDelivered: true });
    }
    const forbidden = result('forbidden');
    expect(!forbidden.ok && forbidden.error).toMatch(/^bob@example\.org: the server or the room does not let the agent send there .*\(forbidden\)/);
  });

  it('retries an unavailable recipient, a room we are not in and a server that asks to wait; never as "may have arrived"', () => {
    for (const [condition, type] of [['service-unavailable', 'cancel'], ['not-acceptable', 'modify'], ['remote-server-timeout', 'wait'], ['forbidden', 'wait'], ['something-new', 'cancel']] as const) {
      expect(result(condition, type)).toMatchObject({ ok: false, retryable: true, permanent: false, notDelivered: true });
    }
    const notIn = result('not-acceptable');
    expect(!notIn.ok && notIn.error).toMatch(/not in that room .*joining it again/);
  });

  it('quotes the server’s own text, shortened', () => {
    const long = stanzaErrorResult({ condition: 'policy-violation', type: 'modify', text: 'x'.repeat(1_000) }, 'bob@example.org');
    expect(!long.ok && long.error.length).toBeLessThan(400);
  });
});
