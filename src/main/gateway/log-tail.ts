import { formatLine, redactFields, type LogFields, type Logger, type LogLevel } from './logger';

/**
 * The gateway's last log lines, in memory, for the window's Logs panel: the
 * same lines the log file or stderr gets (secrets redacted by formatLine),
 * without the window needing to read files. Debug lines are left out.
 */
export class LogTail {
  private readonly lines: string[] = [];

  constructor(private readonly keep = 300) {}

  add(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.keep) this.lines.splice(0, this.lines.length - this.keep);
  }

  /** Oldest first, at most `count`. */
  tail(count = this.keep): readonly string[] {
    return this.lines.slice(-count);
  }
}

/** A logger that writes to `inner` and keeps the line in `tail`. */
export function teeLogger(inner: Logger, tail: LogTail, now: () => Date = () => new Date()): Logger {
  const at =
    (level: LogLevel) =>
    (message: string, fields?: LogFields): void => {
      inner[level](message, fields);
      if (level !== 'debug') tail.add(formatLine(level, message, fields ? redactFields(fields) : undefined, now()));
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
