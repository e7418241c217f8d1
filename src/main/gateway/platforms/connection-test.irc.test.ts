import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeIrcServer, type FakeIrcServer } from '../../../../test/support/fake-irc-server';
import { startNgircd, type RunningNgircd } from '../../../../test/support/ngircd';
import { homingConfigSchema } from '../homing-config';
import { silentLogger } from '../logger';
import { FileSecretStore } from '../secrets/secret-store';
import { testConnection } from './connection-test';

/**
 * Test connection for IRC tries settings that are not saved yet; the saved
 * server password must only ever go to the server it was saved for, and never
 * in plain text when it was saved for TLS.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function secrets(password: string): FileSecretStore {
  const dir = mkdtempSync(join(tmpdir(), 'homing-irc-test-connection-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const store = new FileSecretStore(dir, silentLogger);
  store.set('irc.password', password);
  return store;
}

const saved = (irc: { host: string; port: number; tls: boolean }) => homingConfigSchema.parse({ platforms: { irc: { ...irc, nick: 'homing' } } });

async function fake(): Promise<FakeIrcServer> {
  const server = await startFakeIrcServer();
  cleanups.push(() => server.close());
  return server;
}

const passLines = (server: FakeIrcServer) => server.clients.flatMap((client) => client.lines.filter((line) => /^PASS\b/i.test(line)));

describe('Test connection for IRC', () => {
  it('sends the saved password to the server it was saved for', async () => {
    const ngircd: RunningNgircd = await startNgircd({ password: 'hunter2' });
    cleanups.push(() => ngircd.dispose());
    const form = { host: ngircd.host, port: ngircd.port, tls: false, nick: 'homing' };
    const result = await testConnection('irc', form, { secrets: secrets('hunter2'), env: {}, savedConfig: saved(form), timeoutMs: 5_000 });
    expect(result).toMatchObject({ ok: true });
  });

  it('never sends the saved password to another host or port', async () => {
    const server = await fake();
    const form = { host: server.host, port: server.port, tls: false, nick: 'homing' };
    const result = await testConnection('irc', form, {
      secrets: secrets('hunter2'),
      env: {},
      savedConfig: saved({ host: 'irc.libera.chat', port: server.port, tls: false }),
      timeoutMs: 5_000,
    });
    expect(result).toMatchObject({ ok: true, message: expect.stringContaining('connected') });
    expect(server.clients.length).toBe(1);
    expect(passLines(server)).toEqual([]);

    await testConnection('irc', form, { secrets: secrets('hunter2'), env: {}, savedConfig: saved({ ...form, port: 1 }), timeoutMs: 5_000 });
    expect(server.clients.length).toBe(2);
    expect(passLines(server)).toEqual([]);
  });

  it('never sends a password saved for TLS over plain text, and says why a login failed', async () => {
    const server = await fake();
    const form = { host: server.host, port: server.port, tls: false, nick: 'homing' };
    await testConnection('irc', form, { secrets: secrets('hunter2'), env: {}, savedConfig: saved({ ...form, tls: true }), timeoutMs: 5_000 });
    expect(server.clients.length).toBe(1);
    expect(passLines(server)).toEqual([]);

    const ngircd = await startNgircd({ password: 'hunter2' });
    cleanups.push(() => ngircd.dispose());
    const plain = { host: ngircd.host, port: ngircd.port, tls: false, nick: 'homing' };
    const refused = await testConnection('irc', plain, { secrets: secrets('hunter2'), env: {}, savedConfig: saved({ ...plain, tls: true }), timeoutMs: 5_000 });
    expect(refused).toMatchObject({ ok: false, message: expect.stringContaining('the saved server password was not sent') });
  });

  it('reads no environment variable the form names: only the saved section’s passwordEnv', async () => {
    const server = await fake();
    const form = { host: server.host, port: server.port, tls: false, nick: 'homing', passwordEnv: 'OTHER_PASSWORD' };
    const result = await testConnection('irc', form, {
      secrets: new FileSecretStore(mkdtempSync(join(tmpdir(), 'homing-irc-test-connection-')), silentLogger),
      env: { OTHER_PASSWORD: 'not-for-this-form' },
      savedConfig: saved({ host: server.host, port: server.port, tls: false }),
      timeoutMs: 5_000,
    });
    expect(result).toMatchObject({ ok: true });
    expect(passLines(server)).toEqual([]);
  });

  it('refuses a passwordEnv that names a variable not meant for a password (HOME), naming the field', async () => {
    const server = await fake();
    const form = { host: server.host, port: server.port, tls: false, nick: 'homing', passwordEnv: 'HOME' };
    const result = await testConnection('irc', form, {
      secrets: new FileSecretStore(mkdtempSync(join(tmpdir(), 'homing-irc-test-connection-')), silentLogger),
      env: { HOME: '/root' },
      timeoutMs: 5_000,
    });
    expect(result).toMatchObject({ ok: false, message: expect.stringMatching(/passwordEnv/) });
    expect(passLines(server)).toEqual([]);
  });

  it('refuses a control character in the form before connecting, naming the field', async () => {
    const server = await fake();
    const form = { host: server.host, port: server.port, tls: false, nick: 'homing', realname: 'Homing\r\nJOIN #evil' };
    expect(await testConnection('irc', form, { secrets: secrets('x'), env: {} })).toEqual({
      ok: false,
      message: expect.stringMatching(/^platforms\.irc\.realname: must not contain control characters/),
    });
    expect(server.clients).toEqual([]);
  });
});
