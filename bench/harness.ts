import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Benchmarks print figures measured side by side in one run, with their ratios.
 * They never assert: speed targets live here, not in timed unit tests.
 */
export interface BenchContext {
  /** A fresh temporary directory, removed after the benchmark. */
  tmpDir(): string;
  /** Prints one line: `name  key=value  key=value`. */
  report(name: string, figures: Record<string, number | string>): void;
}

export interface Bench {
  readonly name: string;
  run(context: BenchContext): Promise<void>;
}

export function createContext(out: (line: string) => void): { context: BenchContext; cleanup(): void } {
  const dirs: string[] = [];
  return {
    context: {
      tmpDir() {
        const dir = mkdtempSync(join(tmpdir(), 'homing-bench-'));
        dirs.push(dir);
        return dir;
      },
      report(name, figures) {
        const parts = Object.entries(figures).map(([key, value]) => `${key}=${formatFigure(value)}`);
        out(`  ${name.padEnd(44)} ${parts.join('  ')}`);
      },
    },
    cleanup() {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
      // What a benchmark wrote without fsync (a fill, a log checkpointed at NORMAL) is
      // on the disk before the next one runs: written back meanwhile, it would slow
      // the next one's fsyncs.
      spawnSync('sync');
    },
  };
}

function formatFigure(value: number | string): string {
  if (typeof value === 'string') return value;
  if (Number.isInteger(value)) return String(value);
  return value >= 100 ? value.toFixed(0) : value >= 1 ? value.toFixed(2) : value.toPrecision(3);
}

/** Median of a few timed runs of `fn`, in milliseconds. */
export function medianMs(runs: number, fn: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    fn();
    times.push(performance.now() - start);
  }
  return median(times);
}

/**
 * Runs `conversations` loops at once, each running `cycle` for its share of
 * `n` cycles one after another, and says how many cycles a second.
 */
export async function cyclesPerSecond(n: number, conversations: number, cycle: (conversation: number) => Promise<void>): Promise<number> {
  const perConversation = Math.ceil(n / conversations);
  const start = performance.now();
  await Promise.all(
    Array.from({ length: conversations }, async (_, conversation) => {
      for (let i = 0; i < perConversation; i++) await cycle(conversation);
    }),
  );
  return (perConversation * conversations) / ((performance.now() - start) / 1000);
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
