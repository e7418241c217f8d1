import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../test/support/gateway-process';
import { SMALL, sharedFilledDataDir } from './filled-data-dir';
import { median, type Bench } from './harness';

const RUNS = 7;
/** What the README promises for every `./homing …` command. */
const TARGET_MS = 1_000;

/**
 * The CLI as the README has users type it: `./homing …` from the checkout (a
 * shell script that runs bin/homing.js), each command a new process, against
 * `npx homing …` for the same command, side by side (runs alternate, so both
 * see the same machine). The data directory holds 100 000 delivered rows and
 * 1 000 conversations (filled-data-dir.ts).
 */
const bench: Bench = {
  name: `CLI — a command from start to exit, \`./homing\` vs \`npx homing\`, median of ${RUNS}`,
  async run(context) {
    if (!existsSync(join(REPO_ROOT, 'out', 'main', 'cli.js'))) {
      context.report('skipped', { reason: 'Homing is not built: run `npm run build`' });
      return;
    }
    const { dir } = sharedFilledDataDir(SMALL);
    const home = context.tmpDir();
    const env = { ...process.env, HOME: home, XDG_RUNTIME_DIR: home, HOMING_NO_UPDATE_CHECK: '1' };
    const commands: readonly (readonly string[])[] = [
      ['--version'],
      ['sessions', 'list', '--data-dir', dir],
      ['deliveries', 'list', '--state', 'owed', '--data-dir', dir],
      ['pairing', 'list', '--data-dir', dir],
      ['url', '--data-dir', dir],
      ['service', 'status'],
    ];
    for (const args of commands) {
      const direct: number[] = [];
      const viaNpx: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        direct.push(timed(join(REPO_ROOT, 'homing'), args, env));
        viaNpx.push(timed('npx', ['homing', ...args], env));
      }
      const ms = median(direct);
      context.report(`  homing ${args.join(' ').replace(dir, 'DIR')}`, {
        direct_ms: ms,
        npx_ms: median(viaNpx),
        ratio: median(viaNpx) / ms,
        target: `< ${TARGET_MS} ms direct`,
        ...(ms >= TARGET_MS ? { over_target: 'yes' } : {}),
      });
    }
  },
};
export default bench;

/** Milliseconds from spawn to exit (any exit code: `url` on a directory never served says so and exits 1). */
function timed(command: string, args: readonly string[], env: NodeJS.ProcessEnv): number {
  const start = performance.now();
  const result = spawnSync(command, args, { cwd: REPO_ROOT, env, stdio: 'ignore' });
  if (result.error) throw result.error;
  return performance.now() - start;
}
