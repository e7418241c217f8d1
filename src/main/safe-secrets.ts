/**
 * Platform tokens and API keys under Electron's safeStorage (Keychain, DPAPI,
 * libsecret/kwallet), in `<dataDir>/secrets.safe.json` as ciphertext.
 *
 * How they reach the gateway: the gateway runs in a utilityProcess, which has no
 * safeStorage. The main process decrypts them at each gateway start and sends
 * them over the process's parent port (never argv or env, which other local
 * processes can read); the gateway keeps them in memory (`ParentSecretStore`)
 * and posts every change back, which the main process encrypts and writes.
 *
 * Where Linux offers only the `basic_text` backend (no keyring: the "encryption"
 * uses a key built into Chromium) or no encryption at all, the gateway keeps its
 * own 0600 `secrets.json` instead, and the shell warns the user visibly.
 *
 * The install's pseudonym key stays in `<dataDir>/install-secret` (0600): the
 * headless mode shares the data directory and must derive the same pseudonyms,
 * and it cannot read safeStorage.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonOrMoveAside, writePrivateFile } from './gateway/private-file';
import { SECRET_NAMES, SECRETS_FILE, secretsFileSchema, type SecretName } from './gateway/secrets/secret-store';

/** The part of Electron's safeStorage used here. */
export interface SafeStorageSurface {
  isEncryptionAvailable(): boolean;
  /** Linux only: 'basic_text', 'gnome_libsecret', 'kwallet', 'kwallet5', 'kwallet6', 'unknown'. */
  getSelectedStorageBackend?(): string;
  encryptString(plainText: string): Buffer;
  decryptString(encrypted: Buffer): string;
}

export const SAFE_SECRETS_FILE = 'secrets.safe.json';

export type SecretsBackend =
  /** Encrypted by the OS keyring: the main process holds the secrets. */
  | { readonly kind: 'safe-storage' }
  /** No real encryption here: the gateway's own 0600 file, with a warning. */
  | { readonly kind: 'file'; readonly reason: string };

export function chooseSecretsBackend(safeStorage: SafeStorageSurface, platform: NodeJS.Platform): SecretsBackend {
  if (!safeStorage.isEncryptionAvailable()) return { kind: 'file', reason: 'this system offers no encrypted storage' };
  if (platform === 'linux') {
    const backend = safeStorage.getSelectedStorageBackend?.() ?? 'unknown';
    if (backend === 'basic_text' || backend === 'unknown') {
      return { kind: 'file', reason: 'no keyring (GNOME Keyring or KWallet) is running' };
    }
  }
  return { kind: 'safe-storage' };
}

export class SafeSecrets {
  private readonly file: string;

  constructor(
    private readonly dataDir: string,
    private readonly safeStorage: SafeStorageSurface,
    private readonly log: (message: string) => void,
  ) {
    this.file = join(dataDir, SAFE_SECRETS_FILE);
  }

  /**
   * Decrypts every secret for the gateway. A plain `secrets.json` left by an
   * earlier run without a keyring is moved in once and deleted.
   */
  load(): Partial<Record<SecretName, string>> {
    const stored = this.read();
    const values: Partial<Record<SecretName, string>> = {};
    for (const name of SECRET_NAMES) {
      const cipher = stored[name];
      if (cipher === undefined) continue;
      try {
        values[name] = this.safeStorage.decryptString(Buffer.from(cipher, 'base64'));
      } catch {
        this.log(`a stored secret (${name}) cannot be decrypted any more; enter it again`);
      }
    }
    const plain = join(this.dataDir, SECRETS_FILE);
    if (existsSync(plain)) {
      try {
        const imported = secretsFileSchema.parse(JSON.parse(readFileSync(plain, 'utf8')));
        for (const name of SECRET_NAMES) {
          const value = imported[name];
          if (value !== undefined && values[name] === undefined) values[name] = value;
        }
        this.write(values);
        rmSync(plain);
        this.log(`moved the secrets from ${SECRETS_FILE} into encrypted storage`);
      } catch {
        this.log(`${SECRETS_FILE} could not be read; left as it is`);
      }
    }
    return values;
  }

  /** A change from the gateway (setSecret): encrypt and write, or remove. Only that one secret is touched. */
  change(name: SecretName, value: string | null): void {
    const stored = this.read();
    if (value === null) delete stored[name];
    else stored[name] = this.encrypt(value);
    this.writeStored(stored);
  }

  private read(): Record<string, string> {
    const stored = readJsonOrMoveAside(this.file, secretsFileSchema, () =>
      this.log(`${SAFE_SECRETS_FILE} could not be read; moved it aside, secrets must be entered again`),
    );
    return stored ?? {};
  }

  private write(values: Partial<Record<SecretName, string>>): void {
    const stored: Record<string, string> = {};
    for (const name of SECRET_NAMES) {
      const value = values[name];
      if (value !== undefined) stored[name] = this.encrypt(value);
    }
    this.writeStored(stored);
  }

  private encrypt(value: string): string {
    return this.safeStorage.encryptString(value).toString('base64');
  }

  private writeStored(stored: Record<string, string>): void {
    writePrivateFile(this.file, JSON.stringify(stored, null, 2) + '\n');
  }
}
