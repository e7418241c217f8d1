import { spawn, type ChildProcess } from 'node:child_process';

export interface FixtureProcess {
  readonly process: ChildProcess;
  /** Every stdout line so far. */
  readonly lines: string[];
  /** Resolves with the first stdout line (already seen or future) that matches; rejects if the process exits first. */
  waitForLine(match: (line: string) => boolean): Promise<string>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** Runs a TypeScript fixture in a real Node process (tsx resolves its imports), reading its stdout by lines. */
export function startFixture(file: string, args: string[]): FixtureProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  let buffered = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (data: string) => {
    buffered += data;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.match(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (data: string) => (stderr += data));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, stderr })),
  );
  return {
    process: child,
    lines,
    exited,
    waitForLine(match) {
      const found = lines.find(match);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        void exited.then(({ code, signal, stderr: err }) =>
          reject(new Error(`the fixture exited (${code ?? signal}) before the expected line:\n${err.slice(-2000)}`)),
        );
      });
    },
  };
}
