/**
 * The core logs through this interface only: electron-log backs it in the app, a
 * line writer backs it in headless mode and tests.
 */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export type LogFields = Record<string, unknown>;
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Field names whose values never reach a log line. */
const SECRET_FIELD = /token|secret|password|passwd|api[-_]?key|authorization|cookie/i;

export function redactFields(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields)) {
    if (SECRET_FIELD.test(key)) out[key] = '[redacted]';
    else if (value instanceof Error) out[key] = value.message;
    else out[key] = value;
  }
  return out;
}

export function formatLine(level: LogLevel, message: string, fields?: LogFields, now = new Date()): string {
  const suffix = fields && Object.keys(fields).length > 0 ? ' ' + JSON.stringify(redactFields(fields)) : '';
  return `${now.toISOString()} ${level.toUpperCase().padEnd(5)} ${message}${suffix}`;
}

/** A logger that writes one line per entry to a sink (stderr by default). */
export function createLineLogger(
  options: { level?: LogLevel; write?: (line: string) => void } = {},
): Logger {
  const min = LEVEL_RANK[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const at =
    (level: LogLevel) =>
    (message: string, fields?: LogFields): void => {
      if (LEVEL_RANK[level] >= min) write(formatLine(level, message, fields));
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
