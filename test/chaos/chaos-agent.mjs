#!/usr/bin/env node
/**
 * The chaos harness's command agent (docs/agents.md: the turn as JSON on stdin,
 * the reply on stdout). Deterministic: the reply depends only on the request.
 *
 *   "req-0042"            → "req-0042 line 1/1 ans"
 *   "req-0042 long 14"    → 14 lines "req-0042 line k/14 …", each padded to 350
 *                           bytes: several IRC lines and, past 4000 bytes, several chunks
 *   "… slow"              → answers after 3.5–5 s instead of 0–1.5 s, so a kill
 *                           finds agents that outlive it by more than 3 s
 *
 * The delay before answering is derived from the request id (0 to --max-delay-ms,
 * default 1500). `--run ID` is not read: it marks this run's agent processes in
 * their argv, so the harness can find them in /proc (orphans after a kill).
 * A gateway killed with SIGKILL leaves the agent running; its write to the closed
 * pipe then ends it.
 */
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { run: { type: 'string' }, 'max-delay-ms': { type: 'string' } },
});
const maxDelay = Number(values['max-delay-ms'] ?? 1500);

let raw = '';
for await (const chunk of process.stdin) raw += chunk;
const text = String(JSON.parse(raw).message?.text ?? '');
const id = /\breq-\d+\b/.exec(text)?.[0];
if (!id) {
  process.stdout.write(`no request id in this message\n`);
  process.exit(0);
}

// FNV-1a: a stable spread of delays across ids.
let hash = 0x811c9dc5;
for (const char of id) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
const slow = /\bslow\b/.test(text);
const delay = slow ? 3500 + (hash % 1500) : hash % (maxDelay + 1);
await new Promise((resolve) => setTimeout(resolve, delay));

const lines = Number(/\blong (\d+)\b/.exec(text)?.[1] ?? 1);
const FILLER = 'the quick brown fox jumps over the lazy dog and keeps on running through the field';
const out = [];
for (let k = 1; k <= lines; k++) {
  const head = `${id} line ${k}/${lines}`;
  if (lines === 1) {
    out.push(`${head} ans`);
    continue;
  }
  let line = head;
  while (line.length + FILLER.length + 1 <= 350) line += ' ' + FILLER;
  out.push(line);
}
process.stdout.write(out.join('\n') + '\n');
