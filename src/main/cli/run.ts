import { HOMING_VERSION } from '../version';
import { UsageError, type CliContext, type Command } from './command';
import { commands } from './commands';

export function helpText(): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    `Homing ${HOMING_VERSION} — your local assistant on the chat platforms you already use.`,
    '',
    'Usage: homing <command> [flags]',
    '',
    'Commands:',
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    '',
    'Flags:',
    '  --help, -h     show this help (or `homing <command> --help`)',
    '  --version, -v  print the version',
    '',
    'The data directory is --data-dir, else $HOMING_DATA_DIR, else the one the tray app uses.',
  ].join('\n');
}

export const processContext: CliContext = {
  stdout: (text) => process.stdout.write(text + '\n'),
  stderr: (text) => process.stderr.write(text + '\n'),
  env: process.env,
};

/** Runs `homing …` and resolves to the exit code: 0 ok, 1 failed, 2 misused. */
export async function runCli(argv: string[], context: CliContext = processContext): Promise<number> {
  const [first, ...rest] = argv;
  try {
    if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
      context.stdout(helpText());
      return 0;
    }
    if (first === '--version' || first === '-v') {
      context.stdout(HOMING_VERSION);
      return 0;
    }
    if (first.startsWith('-')) throw new UsageError(`unknown flag ${first}`);
    const command: Command | undefined = commands.find((candidate) => candidate.name === first);
    if (!command) throw new UsageError(`unknown command "${first}"`);
    if (rest.includes('--help') || rest.includes('-h')) {
      context.stdout(`${command.usage}\n\n${command.summary}`);
      return 0;
    }
    return await command.run(rest, context);
  } catch (error) {
    if (error instanceof UsageError) {
      context.stderr(`homing: ${error.message} (see homing --help)`);
      return 2;
    }
    context.stderr(`homing: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
