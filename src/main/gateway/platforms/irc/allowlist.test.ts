import { describe, expect, it } from 'vitest';
import { Allowlist } from './allowlist';

const lower = (text: string) => text.toLowerCase();

describe('Allowlist', () => {
  it('lets a listed nick in whatever its account, and nobody else', () => {
    const list = new Allowlist(['Ada'], false);
    expect(list.decide('ada', undefined, lower)).toBe('allowed');
    expect(list.decide('ADA', null, lower)).toBe('allowed');
    expect(list.decide('mallory', 'mallory', lower)).toBe('refused');
  });

  it('asks for the account when only an account can admit the sender, then decides by it', () => {
    const list = new Allowlist([{ nick: 'ada', account: 'ada-acct' }, { account: 'grace' }], false);
    expect(list.decide('ada', undefined, lower)).toBe('ask-account');
    expect(list.decide('ada', 'ADA-acct', lower)).toBe('allowed');
    expect(list.decide('ada', null, lower)).toBe('refused');
    expect(list.decide('ada', 'mallory', lower)).toBe('refused');
    // An account-only entry admits any nick logged in to it.
    expect(list.decide('grace_away', undefined, lower)).toBe('ask-account');
    expect(list.decide('grace_away', 'grace', lower)).toBe('allowed');
  });

  it('with requireAccount, reads a plain nick as that nick logged in to the same-named account', () => {
    const list = new Allowlist(['ada', { nick: 'bob' }], true);
    expect(list.decide('ada', undefined, lower)).toBe('ask-account');
    expect(list.decide('ada', 'ada', lower)).toBe('allowed');
    expect(list.decide('ada', null, lower)).toBe('refused');
    expect(list.decide('bob', 'bob', lower)).toBe('allowed');
    expect(list.decide('bob', 'ada', lower)).toBe('refused');
  });
});
