import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GatewayOverview } from '../src/shared/api';
import { connectApi, type ApiSocket } from '../test/support/api-socket';
import { REPO_ROOT, startHeadlessGateway, type RunningGateway } from '../test/support/gateway-process';
import { median, type Bench } from './harness';

/** Seconds each gateway is watched per round, and rounds (alternated, so both see the same machine). */
const WINDOW_S = 20;
const ROUNDS = 3;

/** Ten schedules an owner might keep, none due while the bench watches (their next times are hours away). */
const TEN: readonly { repeat: 'every' | 'once'; when: string }[] = [
  { repeat: 'every', when: 'day at 08:00' },
  { repeat: 'every', when: 'weekday at 07:45' },
  { repeat: 'every', when: 'monday 09:30' },
  { repeat: 'every', when: 'friday at 17:00' },
  { repeat: 'every', when: 'sunday at 20:00' },
  { repeat: 'every', when: '0 12 1 * *' },
  { repeat: 'every', when: 'mon,wed at 18:30' },
  { repeat: 'every', when: 'weekend at 10:00' },
  { repeat: 'once', when: '2099-12-24 18:00' },
  { repeat: 'once', when: '2099-01-01 00:05' },
];

/**
 * What an idle gateway costs, with and without ten schedules: CPU seconds
 * and wake-ups (context switches of all its threads) per minute of a headless
 * gateway doing nothing, read from /proc (Linux). The scheduler keeps one
 * timer for the soonest due time, so ten schedules should cost what none do.
 */
const bench: Bench = {
  name: `idle — a headless gateway doing nothing, without and with ten schedules, ${ROUNDS} rounds of ${WINDOW_S} s each`,
  async run(context) {
    if (!existsSync(join(REPO_ROOT, 'out', 'main', 'cli.js'))) {
      context.report('skipped', { reason: 'Homing is not built: run `npm run build`' });
      return;
    }
    if (!existsSync('/proc/self/stat')) {
      context.report('skipped', { reason: 'no /proc here (Linux only)' });
      return;
    }
    const none = await startIdle(context.tmpDir(), 0);
    const ten = await startIdle(context.tmpDir(), TEN.length);
    try {
      const without: Sample[] = [];
      const withTen: Sample[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        // Both watched over the same seconds: whatever else the machine does, both see it.
        const [a, b] = await Promise.all([watch(none.gateway), watch(ten.gateway)]);
        without.push(a);
        withTen.push(b);
      }
      const summary = (samples: Sample[]) => ({
        cpu_s_per_min: median(samples.map((sample) => sample.cpuSecondsPerMinute)),
        wakeups_per_min: median(samples.map((sample) => sample.wakeupsPerMinute)),
      });
      const a = summary(without);
      const b = summary(withTen);
      context.report('no schedules', a);
      context.report('ten schedules', b);
      context.report('ratio ten / none', {
        cpu: b.cpu_s_per_min / Math.max(a.cpu_s_per_min, 1e-6),
        wakeups: b.wakeups_per_min / Math.max(a.wakeups_per_min, 1e-6),
        target: '≈ 1 (one timer for the next due time)',
      });
    } finally {
      none.api.close();
      ten.api.close();
      await Promise.all([none.gateway.stop(), ten.gateway.stop()]);
    }
  },
};
export default bench;

interface Sample {
  readonly cpuSecondsPerMinute: number;
  readonly wakeupsPerMinute: number;
}

async function startIdle(dataDir: string, schedules: number): Promise<{ gateway: RunningGateway; api: ApiSocket }> {
  const gateway = await startHeadlessGateway(['--data-dir', dataDir], { HOMING_DATA_DIR: '' });
  const api = await connectApi(gateway);
  let overview = await api.call<GatewayOverview>('getOverview');
  while (overview.state !== 'running') {
    await new Promise((resolve) => setTimeout(resolve, 20));
    overview = await api.call<GatewayOverview>('getOverview');
  }
  for (const schedule of TEN.slice(0, schedules)) {
    await api.call('addSchedule', { ...schedule, action: 'prompt', body: `idle bench: ${schedule.when}` });
  }
  // Start-up's own work (the first sweep, the heartbeat's first beats) is over before the watch.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  return { gateway, api };
}

/** CPU time and context switches of `gateway` over WINDOW_S seconds, per minute. */
async function watch(gateway: RunningGateway): Promise<Sample> {
  const pid = gateway.child.pid!;
  const before = { cpu: cpuSeconds(pid), switches: contextSwitches(pid) };
  await new Promise((resolve) => setTimeout(resolve, WINDOW_S * 1000));
  const after = { cpu: cpuSeconds(pid), switches: contextSwitches(pid) };
  const perMinute = 60 / WINDOW_S;
  return { cpuSecondsPerMinute: (after.cpu - before.cpu) * perMinute, wakeupsPerMinute: (after.switches - before.switches) * perMinute };
}

/** User + system CPU seconds of a process (all its threads), from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces, in parentheses): utime is the 14th field, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / 100; // USER_HZ is 100 on Linux
}

/** Voluntary and involuntary context switches of every thread of a process: how often it woke up. */
function contextSwitches(pid: number): number {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const status = readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8');
      total += Number(/^voluntary_ctxt_switches:\s+(\d+)$/m.exec(status)?.[1] ?? 0) + Number(/^nonvoluntary_ctxt_switches:\s+(\d+)$/m.exec(status)?.[1] ?? 0);
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return total;
}
