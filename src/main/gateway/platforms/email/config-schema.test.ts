import { describe, expect, it } from 'vitest';
import { homingConfigSchema } from '../../homing-config';
import { imapPort, smtpPort } from './config-schema';

const base = { address: 'Me@Example.org', imap: { host: 'imap.example.org' }, smtp: { host: 'smtp.example.org' } };

describe('the email section of config.json', () => {
  it('takes an address and two servers, with safe defaults (TLS, verified certificates, IDLE, only new mail from allowFrom)', () => {
    const email = homingConfigSchema.parse({ platforms: { email: base } }).platforms.email!;
    expect(email).toMatchObject({ enabled: true, address: 'me@example.org', folder: 'INBOX', allowFrom: [], idle: true, requireAuthenticated: false });
    expect(email.imap).toMatchObject({ security: 'tls', verifyCertificate: true });
    expect(email.smtp).toMatchObject({ security: 'starttls', verifyCertificate: true });
    expect([imapPort(email), smtpPort(email)]).toEqual([993, 587]);
    expect(imapPort({ imap: { ...email.imap, security: 'starttls' } })).toBe(143);
    expect(smtpPort({ smtp: { ...email.smtp, security: 'tls' } })).toBe(465);
  });

  it('refuses a password in the file, a variable not named like one, and addresses that are not addresses', () => {
    const issue = (email: Record<string, unknown>) => homingConfigSchema.safeParse({ platforms: { email } }).error?.issues[0];
    expect(issue({ ...base, password: 'x' })?.message).toMatch(/does not belong in config.json/);
    expect(issue({ ...base, passwordEnv: 'HOME' })?.path).toEqual(['platforms', 'email', 'passwordEnv']);
    expect(issue({ ...base, allowFrom: ['alice'] })?.path).toEqual(['platforms', 'email', 'allowFrom', 0]);
    expect(issue({ ...base, address: 'a@b@c' })?.path).toEqual(['platforms', 'email', 'address']);
    expect(issue({ ...base, imap: { host: 'imap.example.org', security: 'ssl' } })?.path).toEqual(['platforms', 'email', 'imap', 'security']);
  });

  it('takes the trusted mail server as one authserv-id or several, compared without case, and names a bad one', () => {
    const email = (trustedAuthServId: unknown) => homingConfigSchema.safeParse({ platforms: { email: { ...base, trustedAuthServId } } });
    expect(email('MX.Example.org').data?.platforms.email?.trustedAuthServId).toEqual(['mx.example.org']);
    expect(email(['mx1.example.org', 'mx2.example.org']).data?.platforms.email?.trustedAuthServId).toEqual(['mx1.example.org', 'mx2.example.org']);
    for (const bad of ['mx.example.org; spf=pass', '', [], 'two words']) {
      const issue = email(bad).error?.issues[0];
      expect(issue?.path.slice(0, 3), JSON.stringify(bad)).toEqual(['platforms', 'email', 'trustedAuthServId']);
    }
    expect(email('mx.example.org; x').error?.issues[0]?.message).toMatch(/first word of your mail server.s Authentication-Results header/);
  });
});
