import { writeFileSync } from 'node:fs';
import { ChaosUsageError, parseChaosArgs, USAGE } from './options';
import { emergencyCleanups, runChaos } from './run';

// `npm run chaos -- [flags]`: one chaos run against the built gateway; the report on
// stdout, progress on stderr; exit code 0 when the promise held, 1 when a figure
// broke it, 2 for a usage error.

let options;
try {
  options = parseChaosArgs(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof ChaosUsageError)) throw error;
  if (error.message) console.error(`chaos: ${error.message}`);
  console.error(USAGE);
  process.exit(error.message ? 2 : 0);
}

const emergency = async (code: number) => {
  // Kills come first and synchronously inside each cleanup; removing files may take a moment (bounded).
  const cleanups = Promise.all([...emergencyCleanups].map((cleanup) => cleanup().catch(() => undefined)));
  await Promise.race([cleanups, new Promise((resolve) => setTimeout(resolve, 5_000))]);
  process.exit(code);
};
process.once('SIGINT', () => void emergency(130));
process.once('SIGTERM', () => void emergency(143));

try {
  const result = await runChaos(options, (line) => console.error(line));
  console.log(result.report);
  if (result.runDir) console.log(`run directory kept: ${result.runDir}`);
  if (options.jsonFile) {
    writeFileSync(options.jsonFile, JSON.stringify({ options, figures: result.figures, verdict: result.verdict, durationMs: result.durationMs }, null, 2));
  }
  process.exit(result.verdict.ok ? 0 : 1);
} catch (error) {
  console.error(`chaos: the run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  await emergency(1);
}
