import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAppLog, gatewayLineLevel, rendererConsoleLine, scrubSecrets } from './logging';
import { formatLine } from './gateway/logger';

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'homing-log-'));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

describe("the app's log", () => {
  it('is written under <dataDir>/logs/ with the core\'s fields redacted', () => {
    const log = createAppLog(dataDir, { console: false });
    log.logger.info('connected', { platform: 'irc', password: 'hunter2', apiKey: 'sk-abcdefghijklmnop' });
    log.gatewayLine('stderr', formatLine('warn', 'reconnecting', { attempt: 2 }));
    log.gatewayLine('stderr', 'TypeError: boom token=abc123secret');
    const text = readFileSync(join(dataDir, 'logs', 'main.log'), 'utf8');
    expect(text).toContain('connected {"platform":"irc","password":"[redacted]","apiKey":"[redacted]"}');
    expect(text).toMatch(/\[warn\]\s+\[gateway\] .* WARN {2}reconnecting/);
    expect(text).toMatch(/\[error\]\s+\[gateway\] TypeError: boom token=\[redacted\]/);
    expect(text).not.toMatch(/hunter2|abc123secret|abcdefghijklmnop/);
  });

  it('is rotated when it grows past its size limit', () => {
    const log = createAppLog(dataDir, { console: false, maxSize: 2_000 });
    for (let i = 0; i < 60; i++) log.logger.info(`line ${i} ${'x'.repeat(60)}`);
    expect(existsSync(join(dataDir, 'logs', 'main.old.log'))).toBe(true);
    expect(readFileSync(join(dataDir, 'logs', 'main.log'), 'utf8').length).toBeLessThan(4_000);
  });

  it('is private to the user: the data and log directories 0700, main.log 0600, also after a rotation', () => {
    const fresh = join(dataDir, 'new-data-dir');
    const previous = process.umask(0o022);
    let log;
    try {
      log = createAppLog(fresh, { console: false, maxSize: 2_000 });
      for (let i = 0; i < 60; i++) log.logger.info(`line ${i} ${'x'.repeat(60)}`);
    } finally {
      process.umask(previous);
    }
    const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
    expect(existsSync(join(fresh, 'logs', 'main.old.log'))).toBe(true);
    expect([mode(fresh), mode(join(fresh, 'logs')), mode(log.file)]).toEqual(['700', '700', '600']);
  });

  it('tightens a log directory and main.log left world-readable', () => {
    mkdirSync(join(dataDir, 'logs'), { mode: 0o755 });
    writeFileSync(join(dataDir, 'logs', 'main.log'), 'old line\n');
    chmodSync(join(dataDir, 'logs'), 0o755);
    chmodSync(join(dataDir, 'logs', 'main.log'), 0o644);
    const log = createAppLog(dataDir, { console: false });
    log.logger.info('hello');
    expect((statSync(join(dataDir, 'logs')).mode & 0o777).toString(8)).toBe('700');
    expect((statSync(log.file).mode & 0o777).toString(8)).toBe('600');
    expect(readFileSync(log.file, 'utf8')).toMatch(/old line\n.*hello/s);
  });

  it('reads the level of the gateway\'s own lines', () => {
    expect(gatewayLineLevel(formatLine('error', 'x'))).toBe('error');
    expect(gatewayLineLevel(formatLine('info', 'x'))).toBe('info');
    expect(gatewayLineLevel('    at Object.<anonymous> (file.js:1:1)')).toBeUndefined();
  });

  it('keeps renderer warnings and errors, not its chatter', () => {
    expect(rendererConsoleLine('error', 'Uncaught TypeError: x is undefined', 'file:///opt/Homing/out/renderer/assets/index.js', 12)).toBe(
      '[renderer] error: Uncaught TypeError: x is undefined (assets/index.js:12)',
    );
    expect(rendererConsoleLine('info', 'hello', '', 0)).toBeUndefined();
  });

  it('scrubs what looks like a credential in free text', () => {
    expect(scrubSecrets('Authorization: Bearer abcdefghijklmnopqrstuvwxyz')).toBe('Authorization: Bearer [redacted]');
    expect(scrubSecrets('connect irc://nick:pa55word@irc.example.org')).toBe('connect irc://nick:[redacted]@irc.example.org');
    expect(scrubSecrets('key sk-proj-0123456789abcdef')).toBe('key sk-[redacted]');
    expect(scrubSecrets('password="two words"')).toBe('password=[redacted]');
  });
});
