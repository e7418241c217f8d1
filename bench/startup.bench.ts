import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GatewayOverview } from '../src/shared/api';
import { connectApi } from '../test/support/api-socket';
import { REPO_ROOT, startHeadlessGateway } from '../test/support/gateway-process';
import { LARGE, sharedFilledDataDir } from './filled-data-dir';
import { median, type Bench } from './harness';

const RUNS = 5;

interface Start {
  /** Spawn to the first answered API call (getOverview over the window's WebSocket). */
  readonly answeredMs: number;
  /** Spawn to an overview in state `running` (recovery done, control socket open). */
  readonly runningMs: number;
  /** The gateway's resident set once running. */
  readonly rssMb: number;
}

/**
 * Cold start of the built headless gateway (`node bin/homing.js gateway`, a new
 * process each time) on an empty data directory and on one holding 1 000 000
 * delivered ledger rows over the last six days, a few hundred owed, and 10 000
 * conversations active in the last day, each with an answered transcript
 * (filled-data-dir.ts). Runs alternate between the two, so both see the same
 * machine. The fill is on the disk before them (sharedFilledDataDir), and one
 * start of each is made first, not counted: the first start on the filled
 * directory does once what a used one has done long ago (the transcripts'
 * modes tightened, the log switched to WAL), and after it the directory's
 * files are in the page cache, as they are for a gateway restarted on a used
 * machine.
 */
const bench: Bench = {
  name: `start-up — \`homing gateway\` to its first answered API call, empty vs ${LARGE.delivered.toLocaleString('en')} rows + ${LARGE.sessions.toLocaleString('en')} sessions, median of ${RUNS}`,
  async run(context) {
    const built = join(REPO_ROOT, 'out', 'main', 'cli.js');
    if (!existsSync(built)) {
      context.report('skipped', { reason: 'Homing is not built: run `npm run build`' });
      return;
    }
    const { dir: filled, fillMs } = sharedFilledDataDir(LARGE);
    context.report('fill (direct SQL, one transaction)', { ms: fillMs });
    await coldStart(context.tmpDir());
    await coldStart(filled);
    const empty: Start[] = [];
    const large: Start[] = [];
    for (let run = 0; run < RUNS; run++) {
      empty.push(await coldStart(context.tmpDir()));
      large.push(await coldStart(filled));
    }
    const summary = (starts: Start[]) => ({
      answered_ms: median(starts.map((start) => start.answeredMs)),
      min_ms: Math.min(...starts.map((start) => start.answeredMs)),
      max_ms: Math.max(...starts.map((start) => start.answeredMs)),
      running_ms: median(starts.map((start) => start.runningMs)),
      rss_mb: median(starts.map((start) => start.rssMb)),
    });
    const a = summary(empty);
    const b = summary(large);
    context.report('empty data dir (a fresh one each run)', a);
    context.report(`${LARGE.delivered} rows + ${LARGE.sessions} sessions`, b);
    context.report('ratio filled / empty', { answered: b.answered_ms / a.answered_ms, running: b.running_ms / a.running_ms, target: '≤ 1.5, RSS ≤ 120 MB' });
  },
};
export default bench;

async function coldStart(dataDir: string): Promise<Start> {
  const spawned = performance.now();
  const gateway = await startHeadlessGateway(['--data-dir', dataDir], { HOMING_DATA_DIR: '', HOMING_LOG_LEVEL: 'info' });
  try {
    const api = await connectApi(gateway);
    try {
      let overview = await api.call<GatewayOverview>('getOverview');
      const answeredMs = performance.now() - spawned;
      while (overview.state !== 'running') {
        await new Promise((resolve) => setTimeout(resolve, 5));
        overview = await api.call<GatewayOverview>('getOverview');
      }
      const runningMs = performance.now() - spawned;
      return { answeredMs, runningMs, rssMb: rssMb(gateway.child.pid!) };
    } finally {
      api.close();
    }
  } finally {
    await gateway.stop();
  }
}

/** VmRSS of a process, in MB (Linux). */
function rssMb(pid: number): number {
  const line = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return line ? Number(line[1]) / 1024 : NaN;
}
