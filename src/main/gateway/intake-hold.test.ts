import { existsSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { withIntakeHold } from './intake-hold';

describe('the intake hold for crash tests', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('is the function itself when the variable is not set', () => {
    const take = (_: number) => {};
    expect(withIntakeHold({}, take)).toBe(take);
  });

  it('holds messages while the file exists, says so, then hands them on in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'homing-hold-'));
    dirs.push(dir);
    const file = join(dir, 'hold');
    writeFileSync(file, '');
    const taken: number[] = [];
    const take = withIntakeHold({ HOMING_TEST_HOLD_INTAKE: file }, (n: number) => taken.push(n));
    take(1);
    take(2);
    while (!existsSync(`${file}.held`)) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(taken).toEqual([]);
    unlinkSync(file);
    while (taken.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(taken).toEqual([1, 2]);
  });
});
