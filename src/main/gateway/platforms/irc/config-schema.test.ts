import { describe, expect, it } from 'vitest';
import { ircConfigSchema } from './config-schema';

describe('ircConfigSchema', () => {
  it('fills in TLS on 6697, no channels and nobody allowed', () => {
    expect(ircConfigSchema.parse({ host: 'irc.libera.chat', nick: 'homing' })).toEqual({
      host: 'irc.libera.chat',
      port: 6697,
      tls: true,
      nick: 'homing',
      channels: [],
      allow: [],
    });
  });

  it('names the field that is wrong', () => {
    const result = ircConfigSchema.safeParse({ host: 'h', nick: 'bad nick', channels: ['nohash'] });
    expect(result.success).toBe(false);
    const paths = result.error!.issues.map((issue) => issue.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['nick', 'channels.0']));
  });
});
