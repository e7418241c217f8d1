import { existsSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A hold on intake for the crash tests, off unless `HOMING_TEST_HOLD_INTAKE`
 * names a file: while that file exists, every message a platform hands over
 * waits before it is saved, and `<file>.held` says one is waiting. A test can
 * then SIGKILL the gateway between receipt and save on any platform, the
 * moment the intake contract must survive. Messages keep their order.
 */
export function withIntakeHold<A extends unknown[]>(env: NodeJS.ProcessEnv, take: (...args: A) => void): (...args: A) => void {
  const file = env.HOMING_TEST_HOLD_INTAKE;
  if (!file) return take;
  let line = Promise.resolve();
  return (...args) => {
    line = line.then(async () => {
      if (existsSync(file)) writeFileSync(`${file}.held`, '');
      while (existsSync(file)) await sleep(20);
      take(...args);
    });
  };
}
