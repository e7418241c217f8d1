import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { afterEach, describe, expect, it } from 'vitest';
import { dataDirOf, systemdWords, windowsWords } from './service-manager';
import { launchdPlist, systemdUnit, systemdWord, UnrepresentableError, windowsArg, windowsTask, type ServiceSpec } from './service-templates';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'homing-service-'));
  dirs.push(dir);
  return dir;
}

/** A data directory with everything a shell or a service file could misread. */
const AWKWARD = '/home/ann/My "Homing" 100% $HOME \\ data';

function spec(overrides: Partial<ServiceSpec> = {}): ServiceSpec {
  return { node: process.execPath, entry: '/opt/homing/bin/homing.js', dataDir: '/home/ann/.config/Homing', ...overrides };
}

/** Parses XML strictly: any error or warning fails. */
function parseXml(text: string): Document {
  const problems: string[] = [];
  const note = (level: string) => (message: string) => void problems.push(`${level}: ${message}`);
  const doc = new DOMParser({ errorHandler: { warning: note('warning'), error: note('error'), fatalError: note('fatal') } }).parseFromString(text, 'text/xml');
  expect(problems).toEqual([]);
  return doc as unknown as Document;
}

const systemdVersion = (() => {
  const found = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  const match = /^systemd (\d+)/.exec(found.stdout ?? '');
  return match ? Number(match[1]) : undefined;
})();

describe('the systemd user unit', () => {
  it('restarts the gateway always, with a start limit, logs to the journal and is wanted at login', () => {
    const unit = systemdUnit(spec({ port: 8719 }));
    expect(unit).toMatch(/^ExecStart=\S+ \/opt\/homing\/bin\/homing.js gateway --data-dir \/home\/ann\/.config\/Homing --port 8719$/m);
    expect(unit).toMatch(/^Restart=always$/m);
    expect(unit).toMatch(/^StartLimitIntervalSec=600$/m);
    expect(unit).toMatch(/^StartLimitBurst=10$/m);
    expect(unit).toMatch(/^StandardOutput=journal$/m);
    expect(unit).toMatch(/^KillSignal=SIGTERM$/m);
    expect(unit).toMatch(/^WantedBy=default.target$/m);
    // StartLimit* belong to [Unit] (systemd ≥ 230 ignores them in [Service]).
    expect(unit.indexOf('StartLimitBurst')).toBeLessThan(unit.indexOf('[Service]'));
  });

  it('backs the restart delay off only where systemd knows how (254 and later)', () => {
    expect(systemdUnit(spec(), { systemdVersion: 252 })).not.toContain('RestartSteps');
    const newer = systemdUnit(spec(), { systemdVersion: 254 });
    expect(newer).toMatch(/^RestartSteps=5$/m);
    expect(newer).toMatch(/^RestartMaxDelaySec=60$/m);
  });

  it('quotes a path with spaces, quotes, % and $ so systemd reads back the same words', () => {
    const unit = systemdUnit(spec({ dataDir: AWKWARD, path: '/usr/bin:/home/ann/100%/bin' }));
    const exec = /^ExecStart=(.*)$/m.exec(unit)![1]!;
    expect(systemdWords(exec)).toEqual([process.execPath, '/opt/homing/bin/homing.js', 'gateway', '--data-dir', AWKWARD]);
    expect(dataDirOf('linux', unit)).toBe(AWKWARD);
    expect(exec).toContain('100%%');
    expect(exec).toContain('$$HOME');
    // In Environment= a $ means itself; a % is still a specifier.
    expect(unit).toContain('Environment="PATH=/usr/bin:/home/ann/100%%/bin"');
    expect(systemdWord('plain/path-1.0')).toBe('plain/path-1.0');
  });

  it('refuses a path with a line break instead of writing a unit that means something else', () => {
    expect(() => systemdUnit(spec({ dataDir: '/tmp/a\nExecStartPre=/bin/rm -rf ~' }))).toThrow(UnrepresentableError);
  });

  it.skipIf(systemdVersion === undefined)('passes systemd-analyze verify, with no warning, as this machine’s systemd reads it', () => {
    const dir = tempDir();
    const entry = join(dir, 'bin', 'homing.js');
    mkdirSync(join(dir, 'bin'));
    writeFileSync(entry, '');
    const runtime = join(dir, 'runtime');
    mkdirSync(runtime, { mode: 0o700 });
    const file = join(dir, 'homing.service');
    writeFileSync(file, systemdUnit(spec({ entry, dataDir: AWKWARD, port: 8719, path: process.env.PATH }), { systemdVersion }));
    const verified = spawnSync('systemd-analyze', ['verify', '--user', file], {
      encoding: 'utf8',
      env: { ...process.env, XDG_RUNTIME_DIR: runtime, SYSTEMD_LOG_LEVEL: 'notice' },
    });
    expect({ status: verified.status, stderr: verified.stderr.trim() }).toEqual({ status: 0, stderr: '' });

    // And it can fail: a unit naming a program that is not there.
    writeFileSync(file, systemdUnit(spec({ node: join(dir, 'no-such-node') }), { systemdVersion }));
    const broken = spawnSync('systemd-analyze', ['verify', '--user', file], { encoding: 'utf8', env: { ...process.env, XDG_RUNTIME_DIR: runtime } });
    expect(broken.status).not.toBe(0);
    expect(broken.stderr).toContain('is not executable');
  });
});

describe('the launchd agent', () => {
  it('is a well-formed plist that starts at login and again whenever the gateway exits', () => {
    const plist = launchdPlist(spec({ dataDir: AWKWARD, logFile: '/Users/ann/Library/Logs/Homing/gateway.log', path: '/usr/bin:/bin' }));
    const doc = parseXml(plist);
    const found = doc.getElementsByTagName('key');
    const keys = Array.from({ length: found.length }, (_, i) => found.item(i)?.textContent);
    expect(keys).toEqual(['Label', 'ProgramArguments', 'EnvironmentVariables', 'PATH', 'RunAtLoad', 'KeepAlive', 'ThrottleInterval', 'ProcessType', 'StandardOutPath', 'StandardErrorPath']);
    expect(plist).toMatch(/<key>KeepAlive<\/key>\s*<true\/>/);
    expect(plist).toMatch(/<key>RunAtLoad<\/key>\s*<true\/>/);
    expect(dataDirOf('darwin', plist)).toBe(AWKWARD);
  });
});

describe('the Windows scheduled task', () => {
  it('is well-formed Task Scheduler XML: started at logon, restarted after a failure, never timed out', () => {
    const xml = windowsTask(spec({ node: 'C:\\Program Files\\nodejs\\node.exe', entry: 'C:\\Users\\ann\\homing\\bin\\homing.js', dataDir: 'C:\\Users\\ann\\My "Homing" dir\\' }), 'PC\\ann');
    const doc = parseXml(xml);
    const task = doc.documentElement;
    expect(task.tagName).toBe('Task');
    expect(task.getAttribute('xmlns')).toBe('http://schemas.microsoft.com/windows/2004/02/mit/task');
    const text = (tag: string) => doc.getElementsByTagName(tag)[0]?.textContent;
    expect(text('UserId')).toBe('PC\\ann');
    expect(text('ExecutionTimeLimit')).toBe('PT0S');
    expect(text('Count')).toBe('999');
    expect(text('Command')).toBe('C:\\Program Files\\nodejs\\node.exe');
    expect(doc.getElementsByTagName('LogonTrigger')).toHaveLength(1);
    // The arguments come back, word for word, as Windows splits a command line.
    expect(windowsWords(text('Arguments')!)).toEqual(['C:\\Users\\ann\\homing\\bin\\homing.js', 'gateway', '--data-dir', 'C:\\Users\\ann\\My "Homing" dir\\']);
    expect(dataDirOf('win32', xml)).toBe('C:\\Users\\ann\\My "Homing" dir\\');
  });

  it('quotes arguments the way CommandLineToArgvW reads them', () => {
    for (const arg of ['plain', 'with space', 'trailing\\', 'trailing space\\', 'a"quote', 'a\\"b', '']) {
      expect(windowsWords(`x ${windowsArg(arg)} y`)).toEqual(['x', arg, 'y']);
    }
  });
});
