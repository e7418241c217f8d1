import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireDataDirLock } from '../gateway/data-dir-lock';
import { installService, serviceStatus, type ManagerResult, type ServiceHost } from '../service/service-manager';
import { runCli } from './run';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'homing-service-cli-'));
  dirs.push(dir);
  return dir;
}

/**
 * A home of its own, and no user service manager to reach: XDG_RUNTIME_DIR is
 * an empty folder and there is no session bus, so `systemctl --user` here can
 * never touch the real user's services (what a container or CI looks like).
 */
function isolatedEnv(home: string): NodeJS.ProcessEnv {
  const runtime = join(home, 'run');
  mkdirSync(runtime, { recursive: true, mode: 0o700 });
  return { PATH: process.env.PATH, HOME: home, USER: 'ann', XDG_RUNTIME_DIR: runtime, XDG_CONFIG_HOME: join(home, '.config') };
}

async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(args, { stdout: (text) => (out += text + '\n'), stderr: (text) => (err += text + '\n'), env });
  return { code, out, err };
}

describe.runIf(process.platform === 'linux')('homing service (Linux: a systemd user unit)', () => {
  it('install writes the unit into the home, says it is not started when no service manager answers, and status reads it back', async () => {
    const home = tempDir();
    const env = isolatedEnv(home);
    const dataDir = join(home, 'data dir');
    const installed = await cli(['service', 'install', '--data-dir', dataDir, '--port', '8719'], env);
    expect(installed.code).toBe(0);
    const unitFile = join(home, '.config', 'systemd', 'user', 'homing.service');
    expect(installed.out).toContain(`Wrote ${unitFile}`);
    expect(installed.err).toMatch(/written but not started: (no systemd user manager answered|systemctl is not installed)/);
    expect(installed.err).toContain('systemctl --user enable --now homing.service');
    const unit = readFileSync(unitFile, 'utf8');
    expect(unit).toContain(`ExecStart=${process.execPath} `);
    expect(unit).toContain(`--data-dir "${dataDir}" --port 8719`);
    expect(unit).toMatch(/bin\/homing\.js gateway/);

    const status = await cli(['service', 'status'], env);
    expect(status.code).toBe(0);
    expect(status.out).toContain(`Service: installed (${unitFile})`);
    expect(status.out).toContain(`data directory: ${dataDir}`);
    expect(status.out).toMatch(/systemd: cannot be asked/);

    const json = await cli(['service', 'status', '--json'], env);
    expect(JSON.parse(json.out)).toMatchObject({ installed: true, file: unitFile, dataDir });

    const removed = await cli(['service', 'uninstall'], env);
    expect(removed.code).toBe(0);
    expect(removed.out).toContain('Removed the service');
    expect(existsSync(unitFile)).toBe(false);
    const after = await cli(['service', 'status'], env);
    expect(after.code).toBe(1);
    expect(after.out).toContain('No service installed');
  });

  it('says what it needs instead of guessing: no action, an unknown one, a --config that names nothing', async () => {
    const env = isolatedEnv(tempDir());
    expect((await cli(['service'], env)).code).toBe(2);
    expect((await cli(['service', 'start'], env)).err).toContain('unknown action "start"');
    const noConfig = await cli(['service', 'install', '--config', '/nonexistent/config.json'], env);
    expect(noConfig.code).toBe(2);
    expect(noConfig.err).toContain('no such file');
  });
});

/** A service manager that answers from a script, and records what it was asked. */
function scriptedHost(home: string, answers: (command: string, args: readonly string[]) => Partial<ManagerResult> = () => ({})): ServiceHost & { calls: string[] } {
  const calls: string[] = [];
  return {
    platform: 'linux',
    home,
    env: { HOME: home, XDG_CONFIG_HOME: join(home, '.config') },
    uid: 1000,
    user: 'ann',
    calls,
    run(command, args) {
      calls.push([command, ...args].join(' '));
      return { ok: true, code: 0, stdout: '', stderr: '', missing: false, ...answers(command, args) };
    },
  };
}

describe('installing next to a gateway that already runs', () => {
  it('enables the service without starting it, and names the running gateway', () => {
    const home = tempDir();
    const dataDir = join(home, 'data');
    const lock = acquireDataDirLock(dataDir, { mode: 'headless' });
    try {
      const host = scriptedHost(home, (command, args) => (args.includes('show') ? { stdout: 'MainPID=0\n' } : {}));
      const outcome = installService({ node: process.execPath, entry: '/opt/homing/bin/homing.js', dataDir }, host);
      expect(outcome.kind).toBe('enabled');
      expect(outcome.kind === 'enabled' && outcome.holder?.pid).toBe(process.pid);
      expect(host.calls).toContain('systemctl --user enable homing.service');
      expect(host.calls.some((call) => call.includes('restart') || call.includes('start homing'))).toBe(false);
    } finally {
      lock.release();
    }
  });

  it('restarts the service when the running gateway is the service itself (a reinstall)', () => {
    const home = tempDir();
    const dataDir = join(home, 'data');
    const lock = acquireDataDirLock(dataDir, { mode: 'headless' });
    try {
      const host = scriptedHost(home, (command, args) => (args.includes('show') ? { stdout: `MainPID=${process.pid}\n` } : {}));
      const outcome = installService({ node: process.execPath, entry: '/opt/homing/bin/homing.js', dataDir }, host);
      expect(outcome.kind).toBe('started');
      expect(host.calls).toContain('systemctl --user restart homing.service');
    } finally {
      lock.release();
    }
  });

  it('reports the service manager refusing, in its words', () => {
    const home = tempDir();
    const host = scriptedHost(home, (command, args) => (args.includes('enable') ? { ok: false, code: 1, stderr: 'Failed to enable unit: Access denied' } : {}));
    const outcome = installService({ node: process.execPath, entry: '/opt/homing/bin/homing.js', dataDir: join(home, 'data') }, host);
    expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringContaining('Access denied') });
  });

  it('advises lingering when the user services stop at logout', () => {
    const home = tempDir();
    const host = scriptedHost(home, (command) => (command === 'loginctl' ? { stdout: 'no\n' } : {}));
    const outcome = installService({ node: process.execPath, entry: '/opt/homing/bin/homing.js', dataDir: join(home, 'data') }, host);
    expect(outcome.kind).toBe('started');
    expect(outcome.kind === 'started' && outcome.notes.join('\n')).toContain('loginctl enable-linger ann');
  });

  it('status reads the manager and the gateway on the service’s data directory', () => {
    const home = tempDir();
    const dataDir = join(home, 'data');
    const host = scriptedHost(home, (command, args) =>
      args.includes('show') ? { stdout: `ActiveState=active\nSubState=running\nMainPID=${process.pid}\nNRestarts=2\nUnitFileState=enabled\n` } : {},
    );
    installService({ node: process.execPath, entry: '/opt/homing/bin/homing.js', dataDir }, host);
    const lock = acquireDataDirLock(dataDir, { mode: 'headless' });
    try {
      expect(serviceStatus(host)).toMatchObject({
        installed: true,
        dataDir,
        manager: { state: 'active (running)', pid: process.pid, restarts: 2, enabled: true },
        gateway: { running: true, holder: { pid: process.pid, mode: 'headless' } },
      });
    } finally {
      lock.release();
    }
    expect(serviceStatus(host).gateway).toEqual({ running: false, holder: undefined });
  });
});
