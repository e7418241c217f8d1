import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';

/** A process's resident memory, from `/proc/<pid>/status` (Linux). */
export function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/**
 * Samples a child's resident memory every `everyMs` until `stop()`, which
 * returns the peak in MB (samples stop counting once the child has exited).
 */
export function samplePeakMemory(child: ChildProcess, everyMs = 50): { stop(): number } {
  const pid = child.pid!;
  let peak = residentBytes(pid);
  const timer = setInterval(() => {
    if (child.exitCode === null && child.signalCode === null) peak = Math.max(peak, residentBytes(pid));
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return peak / (1 << 20);
    },
  };
}
