import { describe, expect, it } from 'vitest';
import { loadOnce } from './load-once';

describe('loadOnce', () => {
  it('loads once and gives every caller the same result', async () => {
    let loads = 0;
    const load = loadOnce(async () => ({ loaded: ++loads }));
    const [first, second] = await Promise.all([load(), load()]);
    expect(first).toBe(second);
    expect(await load()).toBe(first);
    expect(loads).toBe(1);
  });

  it('tries again after a failed load (a broken install fixed meanwhile), not before it failed', async () => {
    let loads = 0;
    const load = loadOnce(async () => {
      loads++;
      if (loads === 1) throw new Error('Cannot find module');
      return 'library';
    });
    const failing = load();
    expect(load()).toBe(failing); // still loading: the same attempt
    await expect(failing).rejects.toThrow('Cannot find module');
    expect(await load()).toBe('library');
    expect(await load()).toBe('library');
    expect(loads).toBe(2);
  });
});
