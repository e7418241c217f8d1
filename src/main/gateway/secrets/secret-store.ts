import { join } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../logger';
import { readJsonOrMoveAside, writePrivateFile } from '../private-file';
import { SECRET_NAMES, type SecretName } from '../../../shared/platforms';

/** Names of the secrets Homing knows (the agent's and each platform's, src/shared/platforms.ts); values never reach config.json or a log line. */
export { SECRET_NAMES, type SecretName } from '../../../shared/platforms';

export interface SecretStore {
  get(name: SecretName): string | undefined;
  set(name: SecretName, value: string): void;
  delete(name: SecretName): void;
  /** Which secrets are set, never their values. */
  names(): SecretName[];
}

export const SECRETS_FILE = 'secrets.json';
/** What a secrets file holds: names to values (encrypted ones, base64, in the tray app's). */
export const secretsFileSchema = z.record(z.string(), z.string());

/**
 * Secrets in `<dataDir>/secrets.json`, readable by the user only (0600). The tray
 * app can supply a store backed by Electron's safeStorage instead. A file that
 * cannot be read as secrets is moved aside (never deleted) and reported.
 */
export class FileSecretStore implements SecretStore {
  private readonly file: string;
  private values: Record<string, string>;

  constructor(dataDir: string, private readonly logger: Logger) {
    this.file = join(dataDir, SECRETS_FILE);
    this.values = this.read();
  }

  get(name: SecretName): string | undefined {
    return this.values[name];
  }

  set(name: SecretName, value: string): void {
    this.values = { ...this.values, [name]: value };
    this.write();
  }

  delete(name: SecretName): void {
    const { [name]: _removed, ...rest } = this.values;
    this.values = rest;
    this.write();
  }

  names(): SecretName[] {
    return SECRET_NAMES.filter((name) => this.values[name] !== undefined);
  }

  private read(): Record<string, string> {
    const stored = readJsonOrMoveAside(this.file, secretsFileSchema, (movedTo) =>
      this.logger.error('the secret store could not be read; moved it aside, secrets must be entered again', { movedTo }),
    );
    return stored ?? {};
  }

  private write(): void {
    writePrivateFile(this.file, JSON.stringify(this.values, null, 2) + '\n');
  }
}

/** Shows that a secret is set without showing it: `sk-…9f2c`. */
export function maskSecret(value: string): string {
  if (value.length <= 8) return '••••';
  return `${value.slice(0, 3)}…${value.slice(-4)}`;
}
