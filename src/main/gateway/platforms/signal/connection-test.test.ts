import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeSignalCli } from '../../../../../test/support/fake-signal-cli';
import { testSignalConnection } from './connection-test';

describe('Test connection for Signal (against the fake signal-cli daemon)', () => {
  let fake: FakeSignalCli;
  beforeEach(async () => {
    fake = await new FakeSignalCli().start();
  });
  afterEach(() => fake.stop());

  it('names signal-cli’s version and says the account is registered', async () => {
    const result = await testSignalConnection({ daemon: fake.address, account: fake.account.number }, 5_000);
    expect(result).toEqual({ ok: true, message: expect.stringMatching(/^connected to signal-cli 0\.13\.22 at 127\.0\.0\.1:\d+; the account is registered on Signal\./) });
    expect(fake.requests.map((request) => request.method)).toEqual(['version', 'getUserStatus']);
  });

  it('reaches a daemon on its UNIX socket as on TCP', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'homing-signal-socket-'));
    try {
      await fake.listenUnix(join(dir, 'socket'));
      const result = await testSignalConnection({ daemon: `unix:${join(dir, 'socket')}`, account: fake.account.number }, 5_000);
      expect(result).toMatchObject({ ok: true, message: expect.stringContaining(`at ${join(dir, 'socket')}`) });
    } finally {
      await fake.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says how to install, link and start signal-cli when nothing listens', async () => {
    const port = fake.port;
    await fake.stop();
    const result = await testSignalConnection({ daemon: `tcp://127.0.0.1:${port}`, account: '+15550000001' }, 5_000);
    expect(result.ok).toBe(false);
    expect(result.message).toContain('nothing listens there');
    expect(result.message).toContain('signal-cli link -n Homing');
    expect(result.message).toContain('--receive-mode manual');
  });

  it('refuses an outdated signal-cli and an account Signal does not know, in words, without the number', async () => {
    fake.version = '0.11.9';
    expect((await testSignalConnection({ daemon: fake.address, account: fake.account.number }, 5_000)).message).toContain('0.11.9 is too old: Homing needs 0.12.1 or newer');
    fake.version = '0.13.0';
    const unknown = await testSignalConnection({ daemon: fake.address, account: '+15559999999' }, 5_000);
    expect(unknown).toMatchObject({ ok: false, message: expect.stringContaining('not registered') });
    expect(unknown.message).not.toContain('+15559999999');
  });
});
