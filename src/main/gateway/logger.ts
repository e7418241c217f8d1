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

export interface RateLimitOptions {
  /** Lines of one cause written in a window before the rest are only counted (default 10). */
  readonly burst?: number;
  /** The window, in milliseconds (default a minute). */
  readonly windowMs?: number;
}

/**
 * A logger that writes at most `burst` lines of each cause — a level and its
 * message text, whatever the fields — per window, and counts the rest: when a
 * window that suppressed lines ends, one line says how many (a timer, unref'd,
 * so a quiet gateway still hears it). For lines a network can make Homing
 * write at will: refused connections, strangers asking to pair, hostile frames.
 */
export function rateLimitedLogger(logger: Logger, options: RateLimitOptions = {}): Logger {
  const burst = options.burst ?? 10;
  const windowMs = options.windowMs ?? 60_000;
  const windows = new Map<string, { written: number; suppressed: number }>();
  const at =
    (level: LogLevel) =>
    (message: string, fields?: LogFields): void => {
      const cause = `${level} ${message}`;
      let window = windows.get(cause);
      if (!window) {
        const opened = { written: 0, suppressed: 0 };
        window = opened;
        windows.set(cause, opened);
        setTimeout(() => {
          windows.delete(cause);
          if (opened.suppressed > 0) logger[level](`${message} (${opened.suppressed} more like this in the last ${Math.round(windowMs / 1000)} s were not logged)`, { suppressed: opened.suppressed });
        }, windowMs).unref();
      }
      if (window.written < burst) {
        window.written++;
        logger[level](message, fields);
      } else {
        window.suppressed++;
      }
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
