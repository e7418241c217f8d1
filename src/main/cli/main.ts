import { runCli } from './run';

// The entry of the built `out/main/cli.js`, started by `bin/homing.js`.

// `homing deliveries list | head`: the reader went away; that is the end, not a crash.
// Not for `homing gateway`: a gateway outlives its output (`homing gateway | head`, a
// closed terminal) and handles a closed pipe itself (process-guard.ts).
if (process.argv[2] !== 'gateway') {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw error;
    });
  }
}
runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`homing: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
