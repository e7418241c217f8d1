import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultDataDir, ensureDataDir, resolveDataDir } from './data-dir';

describe('the data directory', () => {
  it("is the one Electron's userData gives the tray app, per platform", () => {
    expect(defaultDataDir({}, 'linux', '/home/ada')).toBe('/home/ada/.config/Homing');
    expect(defaultDataDir({ XDG_CONFIG_HOME: '/xdg' }, 'linux', '/home/ada')).toBe('/xdg/Homing');
    expect(defaultDataDir({ XDG_CONFIG_HOME: 'relative' }, 'linux', '/home/ada')).toBe('/home/ada/.config/Homing');
    expect(defaultDataDir({}, 'darwin', '/Users/ada')).toBe('/Users/ada/Library/Application Support/Homing');
  });

  it('prefers --data-dir, then HOMING_DATA_DIR', () => {
    expect(resolveDataDir('/flag', { HOMING_DATA_DIR: '/env' })).toBe('/flag');
    expect(resolveDataDir(undefined, { HOMING_DATA_DIR: '/env' })).toBe('/env');
    expect(resolveDataDir(undefined, { HOMING_DATA_DIR: '', XDG_CONFIG_HOME: '/xdg' })).toMatch(/Homing$/);
  });
});

describe('ensureDataDir', () => {
  const mode = (path: string) => statSync(path).mode & 0o777;
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'homing-modes-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('makes the directory 0700 and every file in it 0600 at every start, whatever they were', () => {
    const dataDir = join(root, 'data');
    mkdirSync(join(dataDir, 'sessions'), { recursive: true });
    mkdirSync(join(dataDir, 'logs'));
    const files = ['secrets.json', 'homing.db', 'homing.db-wal', 'homing.db-shm', 'install-secret', 'config.json', 'sessions/s_1.jsonl', 'logs/main.log'];
    for (const file of files) writeFileSync(join(dataDir, file), 'x');
    // A restored backup: world-readable (and some executable) everything.
    for (const dir of ['', 'sessions', 'logs']) chmodSync(join(dataDir, dir), 0o777);
    for (const file of files) chmodSync(join(dataDir, file), 0o755);

    ensureDataDir(dataDir);

    for (const dir of ['', 'sessions', 'logs']) expect(mode(join(dataDir, dir))).toBe(0o700);
    for (const file of files) expect([file, mode(join(dataDir, file))]).toEqual([file, 0o600]);
  });

  it('creates a missing directory 0700 whatever the umask', () => {
    const previous = process.umask(0o000);
    try {
      ensureDataDir(join(root, 'a', 'b'));
    } finally {
      process.umask(previous);
    }
    expect(mode(join(root, 'a', 'b'))).toBe(0o700);
  });

  it('neither follows nor changes a symbolic link (its target may be outside the data directory)', () => {
    const dataDir = join(root, 'data');
    mkdirSync(dataDir);
    const outside = join(root, 'outside.txt');
    writeFileSync(outside, 'x');
    chmodSync(outside, 0o644);
    symlinkSync(outside, join(dataDir, 'link'));
    ensureDataDir(dataDir);
    expect(mode(outside)).toBe(0o644);
  });
});
