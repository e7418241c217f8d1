/**
 * The app's log: electron-log writing `<dataDir>/logs/main.log`, rotated at
 * 1 MB (the previous file is kept as `main.old.log`). electron-log's Node entry
 * is used on purpose: its Electron entry registers an IPC channel for renderers
 * without any sender check and injects a preload into every session; the
 * renderer's errors reach this log from the main process instead (see
 * `rendererConsoleLine`). Nothing secret is written: fields are redacted by name
 * (`redactFields`) and free text by shape (`scrubSecrets`); the gateway core
 * logs pseudonyms, never raw platform ids.
 */
import { chmodSync, closeSync, fchmodSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import electronLog from 'electron-log/node';
import { redactFields, type Logger, type LogFields, type LogLevel } from './gateway/logger';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './gateway/private-file';

export const LOG_FILE = 'main.log';

export function logsDir(dataDir: string): string {
  return join(dataDir, 'logs');
}

/** Masks what looks like a credential in free text (a crash's stack, a library's message). */
export function scrubSecrets(text: string): string {
  return text
    .replace(/\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '$1 [redacted]')
    .replace(/\b((?:api[-_]?key|token|secret|password|passwd|pass)\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s,;&"']+)/gi, '$1[redacted]')
    .replace(/\b(sk|xox[abpr]|ghp|glpat)[-_][A-Za-z0-9_-]{10,}/g, '$1-[redacted]')
    .replace(/(:\/\/[^/\s:@]+:)[^@\s/]+@/g, '$1[redacted]@');
}

export interface AppLog {
  /** The core's Logger interface, backed by electron-log. */
  readonly logger: Logger;
  /** A line from the gateway process's stdout/stderr (already formatted by its line logger). */
  gatewayLine(stream: 'stdout' | 'stderr', line: string): void;
  readonly file: string;
}

export function createAppLog(dataDir: string, options: { maxSize?: number; console?: boolean } = {}): AppLog {
  const log = electronLog.create({ logId: `homing-${dataDir}` });
  const file = join(logsDir(dataDir), LOG_FILE);
  preparePrivateLog(dataDir, file);
  log.transports.file.resolvePathFn = () => file;
  // The mode of every file electron-log creates, the rotated-in main.log included (its default is 0666 minus the umask).
  log.transports.file.writeOptions = { flag: 'a', mode: PRIVATE_FILE_MODE, encoding: 'utf8' };
  log.transports.file.maxSize = options.maxSize ?? 1024 * 1024;
  log.transports.file.level = 'info';
  log.transports.console.level = options.console === false ? false : 'info';

  const write = (level: LogLevel, message: string, fields?: LogFields): void => {
    const suffix = fields && Object.keys(fields).length > 0 ? ' ' + JSON.stringify(redactFields(fields)) : '';
    log[level](scrubSecrets(message + suffix));
  };
  return {
    file,
    logger: {
      debug: (message, fields) => write('debug', message, fields),
      info: (message, fields) => write('info', message, fields),
      warn: (message, fields) => write('warn', message, fields),
      error: (message, fields) => write('error', message, fields),
    },
    gatewayLine(stream, line) {
      const level = gatewayLineLevel(line) ?? (stream === 'stderr' ? 'error' : 'info');
      log[level](`[gateway] ${scrubSecrets(line)}`);
    },
  };
}

/**
 * The log is written before the gateway has made the data directory private,
 * so it takes care of its own part: the data directory (when it creates it) and
 * logs/ 0700, main.log 0600, whatever they were. electron-log would otherwise
 * create them with the umask's modes (0755 and 0644 on most systems).
 */
function preparePrivateLog(dataDir: string, file: string): void {
  mkdirSync(logsDir(dataDir), { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(logsDir(dataDir), PRIVATE_DIR_MODE);
  const fd = openSync(file, 'a', PRIVATE_FILE_MODE);
  try {
    fchmodSync(fd, PRIVATE_FILE_MODE);
  } finally {
    closeSync(fd);
  }
}

/** The level of a line written by the core's line logger (`formatLine`), if it is one. */
export function gatewayLineLevel(line: string): LogLevel | undefined {
  const match = /^\S+Z (DEBUG|INFO|WARN|ERROR)\s/.exec(line);
  return match ? (match[1]!.toLowerCase() as LogLevel) : undefined;
}

/**
 * A renderer console message worth keeping (warnings and errors, including
 * uncaught exceptions), as one log line; undefined for the rest.
 */
export function rendererConsoleLine(level: string, message: string, sourceId: string, line: number): string | undefined {
  if (level !== 'warning' && level !== 'error') return undefined;
  const source = sourceId ? ` (${sourceId.replace(/^.*\/out\/renderer\//, '')}:${line})` : '';
  return `[renderer] ${level}: ${scrubSecrets(message)}${source}`;
}

