import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, linkSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const INSTALL_SECRET_FILE = 'install-secret';
export const INSTALL_SECRET_BYTES = 32;

export class InstallSecretError extends Error {
  override readonly name = 'InstallSecretError';
}

export interface InstallSecretOptions {
  readonly randomBytes?: (size: number) => Uint8Array;
}

/**
 * The install's pseudonym key, from `<dataDir>/install-secret` (mode 0600),
 * created on first run. The tray app may instead keep the key in safeStorage
 * and hand it to `createPseudonymiser` directly; this file is the fallback and
 * the headless mode's store.
 *
 * Creation is atomic (write a temporary file, fsync, hard-link it into place):
 * two processes starting together agree on one secret, and a crash never
 * leaves a half-written one. A malformed file is an error, never silently
 * replaced: a new key would give every person a new pseudonym and every direct
 * chat a new session.
 */
export function loadOrCreateInstallSecret(dataDir: string, options: InstallSecretOptions = {}): Buffer {
  const file = join(dataDir, INSTALL_SECRET_FILE);
  const existing = readSecret(file);
  if (existing) return existing;

  const random = options.randomBytes ?? cryptoRandomBytes;
  const secret = Buffer.from(random(INSTALL_SECRET_BYTES));
  if (secret.length !== INSTALL_SECRET_BYTES) throw new InstallSecretError('the random source returned too few bytes');
  const temporary = `${file}.${process.pid}.${Buffer.from(random(4)).toString('hex')}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, secret.toString('hex') + '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another process won the race: its secret is the install's.
  } finally {
    unlinkSync(temporary);
  }
  const stored = readSecret(file);
  if (!stored) throw new InstallSecretError(`${file} vanished while it was being created`);
  return stored;
}

function readSecret(file: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new InstallSecretError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const hex = text.trim();
  if (!new RegExp(`^[0-9a-f]{${INSTALL_SECRET_BYTES * 2}}$`).test(hex)) {
    throw new InstallSecretError(`${file} is malformed; restore it from a backup (deleting it re-keys every pseudonym)`);
  }
  tightenMode(file);
  return Buffer.from(hex, 'hex');
}

/** A copied or restored secret may have lost its 0600 mode; quietly restore it. */
function tightenMode(file: string): void {
  if (process.platform === 'win32') return;
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
}
