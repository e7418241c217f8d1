import { runCli } from './run';

// The entry of the built `out/main/cli.js`, started by `bin/homing.js`.
runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`homing: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
