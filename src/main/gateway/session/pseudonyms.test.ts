import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runChild, startChild } from './fixtures/run-child';
import { INSTALL_SECRET_FILE, InstallSecretError, loadOrCreateInstallSecret } from './install-secret';
import { createPseudonymiser } from './pseudonyms';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'homing-pseudonyms-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const IDS = ['+15551234567', '123456789', '@alice:example.org'];

async function pseudonymsIn(dataDir: string, platform: string, ids: string[]): Promise<string[]> {
  const [line] = await runChild(['pseudonyms', dataDir, platform, ...ids]);
  return JSON.parse(line!) as string[];
}

describe('pseudonyms', () => {
  it('have the documented shapes', () => {
    const pseudonyms = createPseudonymiser(Buffer.alloc(32, 1));
    expect(pseudonyms.person('signal', '+15551234567')).toMatch(/^user_[0-9a-f]{12}$/);
    expect(pseudonyms.chat('signal', '+15551234567')).toMatch(/^signal:[0-9a-f]{12}$/);
  });

  it('are stable across restarts of the process', async () => {
    const dataDir = tempDir();
    const first = await pseudonymsIn(dataDir, 'signal', IDS);
    const second = await pseudonymsIn(dataDir, 'signal', IDS);
    expect(second).toEqual(first);
    expect(new Set(first).size).toBe(IDS.length);
  });

  it('differ between two installs for the same person', async () => {
    const [one, other] = await Promise.all([pseudonymsIn(tempDir(), 'signal', IDS), pseudonymsIn(tempDir(), 'signal', IDS)]);
    for (let i = 0; i < IDS.length; i++) expect(one[i]).not.toBe(other[i]);
  });

  it('are not the bare (truncated) sha256 of the id in any obvious framing', () => {
    const pseudonyms = createPseudonymiser(loadOrCreateInstallSecret(tempDir()));
    for (const id of IDS) {
      const hex = pseudonyms.person('signal', id).slice('user_'.length);
      for (const framing of [id, `signal:${id}`, `signal\u0000${id}`, `person\u0000signal\u0000${id}`]) {
        expect(sha256(framing)).not.toContain(hex);
        // The exact bytes the keyed hash is computed over (UTF-16LE), hashed without the key.
        expect(sha256(Buffer.from(framing, 'utf16le'))).not.toContain(hex);
      }
    }
  });

  it('cannot be reversed by hashing every small numeric id without the key', () => {
    const pseudonyms = createPseudonymiser(loadOrCreateInstallSecret(tempDir()));
    const target = pseudonyms.person('telegram', '4242').slice('user_'.length);
    const candidates = new Set<string>();
    for (let id = 0; id < 20_000; id++) {
      candidates.add(sha256(String(id)).slice(0, 12));
      candidates.add(sha256(`telegram:${id}`).slice(0, 12));
      candidates.add(sha256(Buffer.from(`person\u0000telegram\u0000${id}`, 'utf16le')).slice(0, 12));
    }
    expect(candidates.has(target)).toBe(false);
    // …while with the key it is the same computation every time.
    expect(pseudonyms.person('telegram', '4242').slice('user_'.length)).toBe(target);
  });

  it('separate people, platforms and chats', () => {
    const pseudonyms = createPseudonymiser(Buffer.alloc(32, 2));
    expect(pseudonyms.person('telegram', '1')).not.toBe(pseudonyms.person('discord', '1'));
    expect(pseudonyms.person('telegram', '1')).not.toBe(pseudonyms.person('telegram', '2'));
    expect(pseudonyms.chat('telegram', '1').slice('telegram:'.length)).not.toBe(pseudonyms.person('telegram', '1').slice('user_'.length));
  });

  it('refuse a key too short to be a secret', () => {
    expect(() => createPseudonymiser(Buffer.alloc(4))).toThrow(/at least/);
  });
});

describe('the install secret', () => {
  it('is created on first run as a 0600 file and read back unchanged', () => {
    const dataDir = tempDir();
    const created = loadOrCreateInstallSecret(dataDir);
    const file = join(dataDir, INSTALL_SECRET_FILE);
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(created).toHaveLength(32);
    expect(loadOrCreateInstallSecret(dataDir).equals(created)).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(created.toString('hex') + '\n');
  });

  it('uses the injected random source', () => {
    const secret = loadOrCreateInstallSecret(tempDir(), { randomBytes: (size) => Buffer.alloc(size, 0xab) });
    expect(secret.equals(Buffer.alloc(32, 0xab))).toBe(true);
  });

  it('is one secret when two processes start on a fresh data directory at once', async () => {
    const dataDir = tempDir();
    const children = [0, 1, 2].map(() => startChild(['pseudonyms', dataDir, 'irc', 'alice`']));
    const results = await Promise.all(children.map(async (child) => (await child.exited, child.lines[0])));
    results.forEach((line) => expect(line).toMatch(/^\["user_[0-9a-f]{12}"\]$/));
    expect(new Set(results).size).toBe(1);
  });

  it('tightens a secret whose mode was loosened', () => {
    if (process.platform === 'win32') return;
    const dataDir = tempDir();
    loadOrCreateInstallSecret(dataDir);
    const file = join(dataDir, INSTALL_SECRET_FILE);
    chmodSync(file, 0o644);
    loadOrCreateInstallSecret(dataDir);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('is a clear error, not a silent re-key, when the file is malformed', () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, INSTALL_SECRET_FILE), 'not hex\n', { mode: 0o600 });
    expect(() => loadOrCreateInstallSecret(dataDir)).toThrow(InstallSecretError);
    expect(() => loadOrCreateInstallSecret(dataDir)).toThrow(/malformed/);
    expect(readFileSync(join(dataDir, INSTALL_SECRET_FILE), 'utf8')).toBe('not hex\n');
  });
});
