import { describe, expect, it } from 'vitest';
import { xmppPlatformSchema } from './config-schema';

describe('the xmpp section of config.json', () => {
  it('fills in the defaults and lower-cases JIDs and rooms', () => {
    const parsed = xmppPlatformSchema.parse({ jid: 'Homing@Example.org', allowFrom: ['Alice@Example.org'], rooms: { 'Lab@Conference.example.org': {} } });
    expect(parsed).toMatchObject({
      enabled: true,
      jid: 'homing@example.org',
      security: 'starttls',
      resource: 'homing',
      dmPolicy: 'pairing',
      allowFrom: ['alice@example.org'],
      rooms: { 'lab@conference.example.org': { requireMention: true } },
      maxMessageBytes: 10_000,
      allowHttpFiles: false,
    });
  });

  it('refuses a full JID, a password in the file, a bad room and a message size beyond the stanza limit, naming the field', () => {
    const issue = (input: unknown) => {
      const result = xmppPlatformSchema.safeParse(input);
      return result.success ? undefined : `${result.error.issues[0]!.path.join('.')}: ${result.error.issues[0]!.message}`;
    };
    expect(issue({ jid: 'homing@example.org/phone' })).toMatch(/^jid: must be a bare JID/);
    expect(issue({ jid: 'homing@example.org', password: 'x' })).toMatch(/^password: passwords do not belong in config\.json/);
    expect(issue({ jid: 'homing@example.org', rooms: { 'not a room': {} } })).toMatch(/^rooms\.not a room: .* is not a room JID/);
    expect(issue({ jid: 'homing@example.org', maxMessageBytes: 300_000 })).toMatch(/^maxMessageBytes:/);
    expect(issue({ jid: 'homing@example.org', passwordEnv: 'HOME' })).toMatch(/^passwordEnv:/);
    expect(issue({ jid: 'homing@example.org', security: 'maybe' })).toMatch(/^security:/);
  });
});
