import { describe, expect, it } from 'vitest';
import { ircPlatformSchema } from './config-schema';
import { ircConfigSchema } from './config-schema';

const paths = (input: unknown) => {
  const result = ircConfigSchema.safeParse(input);
  return result.success ? [] : result.error.issues.map((issue) => issue.path.join('.'));
};

describe('ircConfigSchema', () => {
  it('fills in TLS on 6697, no channels, nobody allowed, no account required and no pairing', () => {
    expect(ircConfigSchema.parse({ host: 'irc.libera.chat', nick: 'homing' })).toEqual({
      host: 'irc.libera.chat',
      port: 6697,
      tls: true,
      nick: 'homing',
      channels: [],
      allow: [],
      requireAccount: false,
      pairing: false,
    });
  });

  it('names the field that is wrong', () => {
    expect(paths({ host: 'h', nick: 'bad nick', channels: ['nohash'] })).toEqual(expect.arrayContaining(['nick', 'channels.0']));
  });

  it.each([
    ['realname', { realname: 'Homing\r\nPRIVMSG #x :pwned' }],
    ['username', { username: 'ho\x01me' }],
    ['password', { password: 'secret\nQUIT' }],
    ['host', { host: 'irc.example\r\n' }],
    ['nick', { nick: 'homing\r' }],
    ['channels.1', { channels: ['#ok', '#bad\x00'] }],
    ['allow.0', { allow: ['ada\n'] }],
    ['allow.0.account', { allow: [{ nick: 'ada', account: 'ada\r\nQUIT' }] }],
  ])('refuses a control character in %s, naming it', (field, overrides) => {
    const result = ircConfigSchema.safeParse({ host: 'irc.example', nick: 'homing', ...overrides });
    expect(result.success).toBe(false);
    expect(result.error!.issues.map((issue) => issue.path.join('.'))).toContain(field);
  });

  it('says what is wrong with a control character', () => {
    const result = ircConfigSchema.safeParse({ host: 'irc.example', nick: 'homing', realname: 'a\tb' });
    expect(result.error!.issues[0]!.message).toMatch(/control characters/);
  });

  it('refuses control characters in the config.json section too', () => {
    const result = ircPlatformSchema.safeParse({ host: 'irc.example', nick: 'homing', realname: 'x\r\nJOIN #evil' });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]!.path).toEqual(['realname']);
  });

  it('takes allow entries as nicks, accounts, or both', () => {
    const config = ircConfigSchema.parse({
      host: 'h',
      nick: 'homing',
      allow: ['ada', { account: 'grace' }, { nick: 'linus', account: 'torvalds' }],
      requireAccount: true,
    });
    expect(config.allow).toEqual(['ada', { account: 'grace' }, { nick: 'linus', account: 'torvalds' }]);
    expect(config.requireAccount).toBe(true);
    expect(paths({ host: 'h', nick: 'homing', allow: [{}] })).toEqual(['allow.0']);
    expect(paths({ host: 'h', nick: 'homing', allow: [{ nick: 'ada', acount: 'ada' }] })).toEqual(['allow.0']);
  });
});
