import { describe, expect, it } from 'vitest';
import { SharedSync } from './shared-sync';

/** Syncs the test ends by hand, in order, each noting how many writes were made before it started. */
function manualSyncs() {
  let written = 0;
  const started: { covers: number; end: (error?: Error) => void }[] = [];
  const shared = new SharedSync(
    () =>
      new Promise<void>((resolve, reject) => {
        started.push({ covers: written, end: (error) => (error ? reject(error) : resolve()) });
      }),
  );
  const write = () => {
    written += 1;
    return shared.sync();
  };
  return { shared, started, write, tick: () => new Promise((resolve) => setImmediate(resolve)) };
}

describe('SharedSync', () => {
  it('starts at once when idle; callers while it runs share one more, started when it ends and covering them', async () => {
    const { shared, started, write, tick } = manualSyncs();
    const first = write();
    const during = [write(), write(), write()];
    expect(started).toHaveLength(1);
    expect(shared.pending).toBe(during[0]);
    started[0]!.end();
    await first;
    await tick();
    expect(started).toHaveLength(2);
    expect(started[1]!.covers).toBe(4);
    expect(new Set(during).size).toBe(1);
    started[1]!.end();
    await Promise.all(during);
    expect(shared.pending).toBeUndefined();
  });

  it('rejects every caller of a failed sync with its error, and starts afresh for the next', async () => {
    const { started, write, tick } = manualSyncs();
    const first = write();
    const shared = Promise.allSettled([write(), write()]);
    started[0]!.end();
    await first;
    await tick();
    started[1]!.end(new Error('EIO'));
    expect((await shared).map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    const later = write();
    expect(started).toHaveLength(3);
    started[2]!.end();
    await expect(later).resolves.toBeUndefined();
  });
});
