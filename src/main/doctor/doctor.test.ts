import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkDataDir, checkNode, needsUser } from './doctor';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) {
    chmodSync(dir, 0o700);
    rmSync(dir, { recursive: true, force: true });
  }
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'homing-doctor-unit-'));
  dirs.push(dir);
  return dir;
}

describe('doctor checks', () => {
  it('fails a Node older than the engines field allows, and passes 20.19 and later', () => {
    expect(checkNode('18.20.4')).toMatchObject({ level: 'fail', message: expect.stringContaining('too old'), fix: expect.stringContaining('Node') });
    expect(checkNode('20.18.3').level).toBe('fail');
    expect(checkNode('20.19.0').level).toBe('ok');
    expect(checkNode('22.12.0').level).toBe('ok');
  });

  it('tells a data directory the first start will create from one that cannot be created', () => {
    const root = tempDir();
    expect(checkDataDir(join(root, 'new', 'Homing'))).toMatchObject({ level: 'ok', message: expect.stringContaining('does not exist yet') });
    if (process.getuid?.() === 0) return; // root writes anywhere: the refusal below cannot happen
    const locked = join(root, 'locked');
    mkdirSync(locked);
    chmodSync(locked, 0o500);
    expect(checkDataDir(join(locked, 'Homing'))).toMatchObject({ level: 'fail', message: expect.stringContaining('not writable') });
  });

  it('fails a data directory that is a file', () => {
    const file = join(tempDir(), 'Homing');
    writeFileSync(file, '');
    expect(checkDataDir(file)).toMatchObject({ level: 'fail', message: expect.stringContaining('not a directory') });
  });

  it('needs the user only for a failing finding', () => {
    expect(needsUser([{ check: 'a', level: 'warn', message: '' }, { check: 'b', level: 'skip', message: '' }])).toBe(false);
    expect(needsUser([{ check: 'a', level: 'ok', message: '' }, { check: 'b', level: 'fail', message: '' }])).toBe(true);
  });
});
