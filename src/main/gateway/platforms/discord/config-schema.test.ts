import { describe, expect, it } from 'vitest';
import { discordPlatformSchema } from './config-schema';

describe('the discord section of config.json', () => {
  it('has defaults that answer nowhere but paired DMs', () => {
    expect(discordPlatformSchema.parse({})).toEqual({ enabled: true, apiUrl: 'https://discord.com/api', dmPolicy: 'pairing', allowFrom: [], guilds: {}, channels: {} });
  });

  it('takes channels and servers by id, with mention and sender settings', () => {
    const parsed = discordPlatformSchema.parse({ channels: { '123456789012345678': { requireMention: false } }, guilds: { '223456789012345678': { allowFrom: ['*'] } } });
    expect(parsed.channels['123456789012345678']).toEqual({ requireMention: false, allowFrom: [] });
    expect(parsed.guilds['223456789012345678']).toEqual({ requireMention: true, allowFrom: ['*'] });
  });

  it('names the field of a bad id, a numeric id (digits lost), or a token in the file', () => {
    const issues = (value: unknown) => discordPlatformSchema.safeParse(value).error?.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`) ?? [];
    expect(issues({ channels: { general: {} } }).join()).toContain('"general" is not a channel id');
    expect(issues({ allowFrom: [123456789012345] }).join()).toContain('allowFrom.0');
    expect(issues({ token: 'abc' }).join()).toContain('does not belong in config.json');
    expect(issues({ apiUrl: 'ftp://x' }).join()).toContain('apiUrl');
  });
});
