import { describe, expect, it } from 'vitest';
import { signalPlatformSchema } from './config-schema';
import { parseDaemonAddress } from './daemon-address';

const GROUP = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/abcde=';

describe('the signal section of config.json', () => {
  it('needs only the account; the daemon defaults to signal-cli’s --tcp address', () => {
    expect(signalPlatformSchema.parse({ account: '+4915112345678' })).toEqual({
      enabled: true,
      account: '+4915112345678',
      daemon: 'tcp://127.0.0.1:7583',
      dmPolicy: 'pairing',
      allowFrom: [],
      groups: {},
    });
  });

  it('takes people by number or UUID and groups by their base64 id, and names the mistake otherwise', () => {
    const parsed = signalPlatformSchema.parse({ account: '+4915112345678', allowFrom: ['+4915100000000', 'AAAAAAAA-2222-4222-8222-222222222222'], groups: { [GROUP]: { requireMention: false } } });
    expect(parsed.allowFrom).toEqual(['+4915100000000', 'aaaaaaaa-2222-4222-8222-222222222222']);
    expect(parsed.groups[GROUP]).toEqual({ allowFrom: [], requireMention: false });
    const bad = signalPlatformSchema.safeParse({ account: '015112345678', allowFrom: ['alice'], groups: { family: {} } });
    expect(bad.success).toBe(false);
    const messages = bad.error!.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('\n');
    expect(messages).toContain('account: must be the phone number signal-cli is linked to');
    expect(messages).toContain('allowFrom.0: must be a phone number with its country code');
    expect(messages).toContain('groups.family: "family" is not a Signal group id');
  });

  it('reads tcp and unix addresses and refuses HTTP in words', () => {
    expect(parseDaemonAddress('localhost:7583')).toEqual({ ok: true, address: { kind: 'tcp', host: 'localhost', port: 7583 } });
    expect(parseDaemonAddress('tcp://[::1]:7583')).toEqual({ ok: true, address: { kind: 'tcp', host: '::1', port: 7583 } });
    expect(parseDaemonAddress('unix:/run/user/1000/signal-cli/socket')).toEqual({ ok: true, address: { kind: 'unix', path: '/run/user/1000/signal-cli/socket' } });
    expect(parseDaemonAddress('/tmp/s')).toEqual({ ok: true, address: { kind: 'unix', path: '/tmp/s' } });
    expect(parseDaemonAddress('http://127.0.0.1:8080')).toMatchObject({ ok: false, error: expect.stringContaining('not HTTP') });
    expect(parseDaemonAddress('127.0.0.1:99999')).toMatchObject({ ok: false });
    expect(signalPlatformSchema.safeParse({ account: '+4915112345678', daemon: 'somewhere' }).success).toBe(false);
  });
});
