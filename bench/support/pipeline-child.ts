import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipelineTurnsPerSecond } from './pipeline-run';

// `tsx bench/support/pipeline-child.ts CONVERSATIONS TURNS`: one durable run, for
// counting its fsyncs from outside (strace). Zero turns measures start and stop alone.
const [conversations, turns] = process.argv.slice(2).map(Number);
const dir = mkdtempSync(join(tmpdir(), 'homing-bench-child-'));
try {
  if (turns! > 0) await pipelineTurnsPerSecond(dir, conversations!, turns!);
  else await pipelineTurnsPerSecond(dir, 1, 0);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
