import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Gateway } from './gateway';
import { silentLogger } from './logger';

let dataDir: string;
let gateway: Gateway;
beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'homing-pause-'));
  gateway = Gateway.start({ dataDir, mode: 'app', version: '0.0.0-test', logger: silentLogger, detectSleep: false, detectOllama: false });
  await gateway.ready;
});
afterEach(async () => {
  await gateway.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('setPaused (the tray\'s Pause / Resume gateway)', () => {
  it('pauses and resumes the platforms and keeps the app\'s own chat connected', async () => {
    expect(await gateway.api.dispatch('setPaused', { paused: true })).toEqual({ ok: true, value: { paused: true } });
    expect(gateway.platforms.isPaused).toBe(true);
    expect(gateway.platforms.status('local')?.state).toBe('connected');
    const sent = await gateway.api.dispatch('sendLocalMessage', { text: 'still here' });
    expect(sent.ok).toBe(true);

    expect(await gateway.api.dispatch('setPaused', { paused: false })).toEqual({ ok: true, value: { paused: false } });
    expect(gateway.platforms.isPaused).toBe(false);
  });

  it('rejects params that are not a boolean', async () => {
    expect(await gateway.api.dispatch('setPaused', { paused: 'yes' } as never)).toMatchObject({ ok: false, error: { code: 'bad-request' } });
  });
});
