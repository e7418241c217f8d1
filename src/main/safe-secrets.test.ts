import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ParentSecretStore, isSecretChange, type SecretsMessage } from './parent-secret-store';
import { SafeSecrets, chooseSecretsBackend, type SafeStorageSurface } from './safe-secrets';

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'homing-safe-'));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

/** safeStorage with a reversible stand-in cipher (a keyring cannot be reached here). */
function fakeSafeStorage(backend = 'gnome_libsecret', available = true): SafeStorageSurface {
  const flip = (buffer: Buffer) => Buffer.from(buffer.map((byte) => byte ^ 0x5a));
  return {
    isEncryptionAvailable: () => available,
    getSelectedStorageBackend: () => backend,
    encryptString: (text) => flip(Buffer.from('enc:' + text)),
    decryptString: (data) => flip(data).toString().replace(/^enc:/, ''),
  };
}

describe('the secrets backend', () => {
  it('is safeStorage where a keyring encrypts, and the 0600 file with a warning where Linux has only plain text', () => {
    expect(chooseSecretsBackend(fakeSafeStorage('gnome_libsecret'), 'linux')).toEqual({ kind: 'safe-storage' });
    expect(chooseSecretsBackend(fakeSafeStorage('kwallet6'), 'linux')).toEqual({ kind: 'safe-storage' });
    expect(chooseSecretsBackend(fakeSafeStorage('basic_text'), 'linux')).toMatchObject({ kind: 'file', reason: expect.stringMatching(/keyring/) });
    expect(chooseSecretsBackend(fakeSafeStorage('x', false), 'darwin')).toMatchObject({ kind: 'file' });
    expect(chooseSecretsBackend(fakeSafeStorage('irrelevant'), 'win32')).toEqual({ kind: 'safe-storage' });
  });
});

describe('secrets in safeStorage', () => {
  it('are written as ciphertext and read back', () => {
    const secrets = new SafeSecrets(dataDir, fakeSafeStorage(), () => {});
    secrets.change('irc.password', 'hunter2');
    secrets.change('agent.apiKey', 'sk-123');
    expect(readFileSync(join(dataDir, 'secrets.safe.json'), 'utf8')).not.toMatch(/hunter2|sk-123/);
    expect(secrets.load()).toEqual({ 'irc.password': 'hunter2', 'agent.apiKey': 'sk-123' });
    secrets.change('irc.password', null);
    expect(secrets.load()).toEqual({ 'agent.apiKey': 'sk-123' });
  });

  it('take over a plain secrets.json once and delete it', () => {
    writeFileSync(join(dataDir, 'secrets.json'), JSON.stringify({ 'irc.password': 'old' }));
    const logged: string[] = [];
    const secrets = new SafeSecrets(dataDir, fakeSafeStorage(), (line) => logged.push(line));
    expect(secrets.load()).toEqual({ 'irc.password': 'old' });
    expect(existsSync(join(dataDir, 'secrets.json'))).toBe(false);
    expect(secrets.load()).toEqual({ 'irc.password': 'old' });
    expect(logged.join('\n')).not.toContain('old');
  });
});

describe("the gateway process's secret store", () => {
  it('keeps the values it was handed and posts every change to the main process', () => {
    const posted: SecretsMessage[] = [];
    const store = new ParentSecretStore({ 'irc.password': 'p', bogus: 'x', 'agent.apiKey': 42 }, (message) => posted.push(message));
    expect(store.names()).toEqual(['irc.password']);
    store.set('agent.apiKey', 'k');
    store.delete('irc.password');
    expect(store.get('agent.apiKey')).toBe('k');
    expect(store.names()).toEqual(['agent.apiKey']);
    expect(posted).toEqual([
      { type: 'secret-changed', name: 'agent.apiKey', value: 'k' },
      { type: 'secret-changed', name: 'irc.password', value: null },
    ]);
    expect(posted.every(isSecretChange)).toBe(true);
    expect(isSecretChange({ type: 'secret-changed', name: 'other', value: 'x' })).toBe(false);
  });
});
