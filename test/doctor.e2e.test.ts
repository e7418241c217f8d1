import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireDataDirLock } from '../src/main/gateway/data-dir-lock';
import { FakeTelegram } from './support/fake-telegram';
import { startHeadlessGateway } from './support/gateway-process';
import { startOpenAiStub, STUB_MODEL, type OpenAiStub } from './support/openai-stub';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', 'bin', 'homing.js');

/**
 * `homing doctor` as a user runs it: the real CLI in a child process, on a data
 * directory of its own, against a real agent server (the OpenAI stub) and the
 * Telegram fake, with no user service manager to reach.
 */
describe('homing doctor', () => {
  let scratch: string;
  let telegram: FakeTelegram;
  let agent: OpenAiStub;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'homing-doctor-'));
    telegram = new FakeTelegram();
    await telegram.start();
    agent = await startOpenAiStub(() => 'Hello from the stub.');
  });
  afterAll(async () => {
    await telegram.stop();
    await agent.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  let n = 0;
  function dataDir(config?: unknown, secrets?: Record<string, string>): string {
    const dir = join(scratch, `data-${++n}`);
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o700);
    if (config !== undefined) writeFileSync(join(dir, 'config.json'), typeof config === 'string' ? config : JSON.stringify(config, null, 2));
    if (secrets) writeFileSync(join(dir, 'secrets.json'), JSON.stringify(secrets), { mode: 0o600 });
    return dir;
  }

  function doctor(dir: string, ...extra: string[]): Promise<{ code: number; out: string }> {
    return homing(['doctor', '--data-dir', dir, '--timeout', '5', ...extra]);
  }

  /** The CLI in a home of its own, with no user service manager to reach (systemctl --user cannot touch the real user's). */
  async function homing(args: string[]): Promise<{ code: number; out: string }> {
    const home = join(scratch, 'home');
    mkdirSync(join(home, 'run'), { recursive: true, mode: 0o700 });
    const env = { PATH: process.env.PATH, HOME: home, USER: 'ann', XDG_RUNTIME_DIR: join(home, 'run'), HOMING_NO_UPDATE_CHECK: '1' };
    try {
      const { stdout } = await run(process.execPath, [BIN, ...args], { env, timeout: 60_000 });
      return { code: 0, out: stdout };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      if (typeof failed.code !== 'number') throw error;
      return { code: failed.code, out: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
    }
  }

  const openai = () => ({ type: 'openai', baseUrl: agent.baseUrl, model: STUB_MODEL });

  it('finds nothing to fix on a healthy data directory: a working agent and a Telegram bot whose token is right', async () => {
    const dir = dataDir(
      { agent: openai(), platforms: { telegram: { enabled: true, apiRoot: telegram.apiRoot } } },
      { 'telegram.token': telegram.token },
    );
    const { code, out } = await doctor(dir);
    expect(out).toMatch(/✓ agent: .+/);
    expect(out).toMatch(/✓ telegram: Telegram: .+/);
    expect(out).toContain('✓ config: ');
    expect(out).not.toContain('✗');
    // The token is used, never shown.
    expect(out).not.toContain(telegram.token);
    expect(out).not.toContain(telegram.token.split(':')[1]!);
    expect(code).toBe(0);
  });

  it('names the gateway that holds a locked data directory, and that is no problem', async () => {
    const dir = dataDir();
    const lock = acquireDataDirLock(dir, { mode: 'headless' });
    try {
      const { code, out } = await doctor(dir);
      expect(out).toContain(`✓ gateway: a gateway is running on this data directory (pid ${process.pid}, headless`);
      expect(code).toBe(0);
    } finally {
      lock.release();
    }
  });

  it('says what is wrong with a broken config.json, where, and exits 1', async () => {
    const dir = dataDir('{ "agent": { "type": "openai", "baseUrl": 42 }, ');
    const { code, out } = await doctor(dir);
    expect(out).toMatch(/✗ config: .*config\.json.*(JSON|json)/);
    expect(out).toContain('never overwrites it');
    expect(code).toBe(1);

    const invalid = dataDir({ agent: { type: 'openai', baseUrl: 'not a url', model: 'm' } });
    const second = await doctor(invalid);
    expect(second.out).toMatch(/✗ config: .*agent\.baseUrl/);
    expect(second.code).toBe(1);
  });

  it('says the agent does not answer when its server is down, and exits 1', async () => {
    const dir = dataDir({ agent: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'llama3' } });
    const { code, out } = await doctor(dir);
    expect(out).toMatch(/✗ agent: .*(refused|nothing answers|no answer)/i);
    expect(out).toContain('→ fix the agent');
    expect(code).toBe(1);
  });

  it('says Telegram refused a wrong token without printing it, and exits 1', async () => {
    const wrong = '987654321:AAWrongTokenWrongTokenWrongToken_xyz';
    const dir = dataDir({ agent: openai(), platforms: { telegram: { enabled: true, apiRoot: telegram.apiRoot } } }, { 'telegram.token': wrong });
    const { code, out } = await doctor(dir);
    expect(out).toMatch(/✗ telegram: Telegram: .*(refused|unauthorized|token)/i);
    expect(out).not.toContain('AAWrongTokenWrongTokenWrongToken_xyz');
    expect(code).toBe(1);
  });

  it('warns about a data directory other users can read, and answers --json', async () => {
    const dir = dataDir();
    chmodSync(dir, 0o755);
    const { code, out } = await doctor(dir, '--json');
    const report = JSON.parse(out) as { needsYou: boolean; findings: { check: string; level: string; message: string }[] };
    expect(report.needsYou).toBe(false);
    expect(report.findings.find((finding) => finding.check === 'data directory')).toMatchObject({ level: 'warn', message: expect.stringContaining('0755') });
    expect(code).toBe(0);
  });

  it('service status reads back an installed service and asks the gateway running on its data directory', async () => {
    const dir = dataDir();
    const gateway = await startHeadlessGateway(['--data-dir', dir]);
    try {
      const installed = await homing(['service', 'install', '--data-dir', dir]);
      expect(installed.out).toContain(`--data-dir ${dir}`);
      // Next to a running gateway, nothing is started (and here no service manager answers anyway).
      const status = await homing(['service', 'status']);
      expect(status.code).toBe(0);
      expect(status.out).toContain(`data directory: ${dir}`);
      expect(status.out).toMatch(new RegExp(`gateway: running \\(pid ${gateway.child.pid}, headless`));
      expect(status.out).toMatch(/it says: running, Homing \d+\.\d+\.\d+, up \d+ min/);
      const checked = await doctor(dir);
      expect(checked.out).toContain(`✓ gateway: a gateway is running on this data directory (pid ${gateway.child.pid}, headless`);
      expect(checked.out).toMatch(/service: installed/);
    } finally {
      await gateway.stop();
      await homing(['service', 'uninstall']);
    }
  });
});
