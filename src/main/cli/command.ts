import { existsSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { resolveDataDir } from '../gateway/data-dir';
import { isCursor } from '../../shared/page-cursor';

export interface CliContext {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
}

/** One `homing <name> …` command. `run` resolves to the process exit code. */
export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  run(args: string[], context: CliContext): Promise<number>;
}

/** A mistake in how the command was called: one line, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** `util.parseArgs` in strict mode, with its errors turned into one-line UsageErrors. */
export function parseCommandArgs<O extends Options>(
  command: string,
  args: string[],
  options: O,
  positionals: { min?: number; max?: number } = { max: 0 },
) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(`${command}: ${cleanParseError(error)}`);
  }
  const count = parsed.positionals.length;
  if (count < (positionals.min ?? 0)) throw new UsageError(`${command}: missing argument`);
  if (positionals.max !== undefined && count > positionals.max) {
    throw new UsageError(`${command}: unexpected argument "${parsed.positionals[positionals.max]}"`);
  }
  return parsed;
}

function cleanParseError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // parseArgs appends advice about '--' that does not apply to our commands.
  return message.split('. To specify')[0]!.replace(/\.$/, '').replace(/^Unknown option/, 'unknown flag');
}

/** `--page N`: a positive page number, 1 when absent. */
export function parsePage(command: string, value: string | undefined): number {
  if (value === undefined) return 1;
  if (!/^[1-9]\d{0,6}$/.test(value)) throw new UsageError(`${command}: --page must be a positive number, not "${value}"`);
  return Number(value);
}

/** `--after CURSOR`: a `nextCursor` a previous page printed, checked before any file is opened. */
export function parseCursor(command: string, value: string | undefined, page: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (page !== undefined) throw new UsageError(`${command}: give --after or --page, not both`);
  if (!isCursor(value)) throw new UsageError(`${command}: --after takes the cursor a previous page printed, not "${value.slice(0, 80)}"`);
  return value;
}

/** A time as the CLI prints it: `2026-12-01 03:04:05` (UTC). */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
}

export function parsePort(command: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) {
    throw new UsageError(`${command}: --port must be a number from 0 to 65535, not "${value}"`);
  }
  return Number(value);
}

/**
 * The data directory a command reads or changes. One the user named (--data-dir,
 * $HOMING_DATA_DIR) that does not exist is a typo until proven otherwise: said
 * at once (exit 1), not answered with an empty list. The default directory may
 * not exist yet (nothing has run): that is an honest "nothing yet". Call it
 * after the arguments are checked, so a misused command still says how to use it.
 */
export function dataDirToUse(command: string, flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const dataDir = resolveDataDir(flag, env);
  const named = flag !== undefined ? '--data-dir' : env.HOMING_DATA_DIR ? '$HOMING_DATA_DIR' : undefined;
  if (named !== undefined && !existsSync(dataDir)) {
    throw new Error(`${command}: ${named} ${dataDir} does not exist; check its spelling (homing doctor --data-dir DIR says more)`);
  }
  return dataDir;
}
