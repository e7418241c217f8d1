import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Bench, BenchContext } from './harness';
import { median } from './harness';
import { pipelineTurnsPerSecond, pipelineWalFrames } from './support/pipeline-run';
import { perTurn } from './support/wal-frames';

const TURNS = 1_000;
/** Runs of each kind, alternated (durable, in memory, durable, …): each ratio is the median of the rounds' ratios. */
const ROUNDS = 9;
/** A first run of each kind, not counted: the code is compiled by the JIT before either is timed. */
const WARM_UP_TURNS = 300;
/** Turns whose write-ahead-log frames are counted (the log keeps them all, unchecked). */
const WAL_TURNS = 200;

/**
 * Messages through the whole pipeline (session, built-in agent — replies of
 * ~700 characters —, transcript, ledger, local delivery) spread over 1, 10 and
 * 100 conversations, with the ledger and session index durable in homing.db
 * versus in memory, side by side: after a warm-up run of each, in alternated
 * rounds, so neither is timed on colder code or a busier moment than the other. Transcripts are on disk in both, so the ratio
 * is the cost of the database's durability. Beside it, the fsyncs (fsync +
 * fdatasync, every thread) one durable turn costs, counted by strace on a
 * child process: (a run of TURNS turns − a run of none) / TURNS. Under it, the
 * write-ahead-log frames (4 KiB pages) and commits a durable turn wrote, and the
 * tables or indexes written most: counted from the log, so the same on a busy
 * machine (support/wal-frames.ts).
 */
const bench: Bench = {
  name: `Pipeline throughput, built-in agent, ${TURNS} messages per run`,
  async run(context) {
    for (const conversations of [1, 10, 100]) {
      const durable = () => pipelineTurnsPerSecond(context.tmpDir(), conversations, TURNS);
      const memory = () => pipelineTurnsPerSecond(context.tmpDir(), conversations, TURNS, ':memory:');
      await pipelineTurnsPerSecond(context.tmpDir(), conversations, WARM_UP_TURNS);
      await pipelineTurnsPerSecond(context.tmpDir(), conversations, WARM_UP_TURNS, ':memory:');
      const rounds: { durable: number; memory: number }[] = [];
      for (let round = 0; round < ROUNDS; round++) rounds.push({ durable: await durable(), memory: await memory() });
      context.report(`${conversations} conversation${conversations === 1 ? '' : 's'}`, {
        ledger_durable_turns_per_s: median(rounds.map((r) => r.durable)),
        ledger_in_memory_turns_per_s: median(rounds.map((r) => r.memory)),
        ratio: median(rounds.map((r) => r.durable / r.memory)),
        fsyncs_per_turn: fsyncsPerTurn(context, conversations),
      });
      context.report('  what the database wrote per turn', perTurn(await pipelineWalFrames(context.tmpDir(), conversations, WAL_TURNS), WAL_TURNS));
    }
  },
};

const child = fileURLToPath(new URL('./support/pipeline-child.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url));

function fsyncsPerTurn(context: BenchContext, conversations: number): number | string {
  const counted = (turns: number): number | undefined => {
    const out = join(context.tmpDir(), 'strace.txt');
    const run = spawnSync('strace', ['-f', '-c', '-e', 'trace=fsync,fdatasync', '-o', out, tsx, child, String(conversations), String(turns)], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (run.error || run.status !== 0) return undefined;
    let total = 0;
    for (const line of readFileSync(out, 'utf8').split('\n')) {
      const match = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(fsync|fdatasync)\s*$/.exec(line);
      if (match) total += Number(match[1]);
    }
    return total;
  };
  const busy = counted(TURNS);
  const idle = counted(0);
  if (busy === undefined || idle === undefined) return 'n/a (needs strace)';
  return (busy - idle) / TURNS;
}

export default bench;
