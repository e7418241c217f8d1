import { describe, expect, it } from 'vitest';
import { homingConfigSchema } from '../../homing-config';

const parse = (platforms: unknown) => homingConfigSchema.safeParse({ platforms });
const firstIssue = (platforms: unknown) => {
  const result = parse(platforms);
  return result.success ? undefined : { path: result.error.issues[0]!.path.join('.'), message: result.error.issues[0]!.message };
};

describe('the telegram section of config.json', () => {
  it('defaults to the real API, pairing for direct messages, no groups, a 30 s long poll', () => {
    const result = parse({ telegram: {} });
    expect(result.success && result.data.platforms.telegram).toEqual({
      enabled: true,
      apiRoot: 'https://api.telegram.org',
      dmPolicy: 'pairing',
      allowFrom: [],
      groups: {},
      pollTimeoutSeconds: 30,
    });
  });

  it('takes ids as numbers or strings, and group settings with their defaults', () => {
    const result = parse({ telegram: { allowFrom: [7000000001, '123456789'], groups: { '-1001234567890': { allowFrom: ['*'] } } } });
    expect(result.success && result.data.platforms.telegram).toMatchObject({
      allowFrom: ['7000000001', '123456789'],
      groups: { '-1001234567890': { allowFrom: ['*'], requireMention: true } },
    });
  });

  it('refuses a token in the file, a variable not named like a secret, a positive group id, and a non-http API', () => {
    expect(firstIssue({ telegram: { token: '1:abc' } })?.message).toMatch(/does not belong in config.json/);
    expect(firstIssue({ telegram: { tokenEnv: 'HOME' } })?.path).toBe('platforms.telegram.tokenEnv');
    expect(firstIssue({ telegram: { groups: { '12345': {} } } })?.message).toMatch(/negative/);
    expect(firstIssue({ telegram: { apiRoot: 'file:///etc/passwd' } })?.path).toBe('platforms.telegram.apiRoot');
    expect(firstIssue({ telegram: { allowFrom: ['alice'] } })?.message).toMatch(/numeric id/);
  });

  it('refuses IRC pairing together with requireAccount (pairing approves nicks)', () => {
    expect(firstIssue({ irc: { host: 'irc.example.org', nick: 'homing', pairing: true, requireAccount: true } })).toMatchObject({ path: 'platforms.irc.pairing' });
    expect(parse({ irc: { host: 'irc.example.org', nick: 'homing', pairing: true } }).success).toBe(true);
  });
});
