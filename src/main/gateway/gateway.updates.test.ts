import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { waitUntil } from '../../../test/support/wait';
import type { GatewayOverview } from '../../shared/api';
import { Gateway, type GatewayOptions } from './gateway';
import { createLineLogger } from './logger';
import type { ReleaseFetch } from './updates/release-check';

const dirs: string[] = [];
const gateways: Gateway[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.stop(1_000);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function start(config: unknown, options: Partial<GatewayOptions>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'homing-gw-updates-'));
  dirs.push(dataDir);
  writeFileSync(join(dataDir, 'config.json'), JSON.stringify(config));
  const lines: string[] = [];
  const gateway = Gateway.start({
    dataDir,
    mode: 'headless',
    version: '0.2.0',
    logger: createLineLogger({ write: (line) => lines.push(line) }),
    detectSleep: false,
    detectOllama: false,
    // The tests' own environment says HOMING_NO_UPDATE_CHECK=1; these gateways check, against a fake feed.
    env: {},
    ...options,
  });
  gateways.push(gateway);
  return { gateway, lines };
}

async function overview(gateway: Gateway): Promise<GatewayOverview> {
  const result = await gateway.api.dispatch('getOverview', undefined);
  if (!result.ok) throw new Error(result.error.message);
  return result.value as GatewayOverview;
}

const feed = (tag: string) => vi.fn<ReleaseFetch>(async () => new Response(JSON.stringify({ tag_name: tag })));

describe('a headless gateway and new releases', () => {
  it('tells the window and the log of a newer release, and takes it back when autoUpdate is turned off', async () => {
    const fetch = feed('v0.3.0');
    const { gateway, lines } = start({}, { updateCheck: { fetch, firstCheckMs: 10 } });
    await gateway.ready;
    await waitUntil('the update notice', async () => (await overview(gateway)).update != null);
    expect((await overview(gateway)).update).toEqual({ version: '0.3.0', url: 'https://github.com/homing-app/homing/releases/tag/v0.3.0' });
    expect(lines.filter((line) => line.includes('update available'))).toEqual([expect.stringMatching(/INFO {2}update available \{"version":"0\.3\.0","url":"https:\/\/github\.com\/homing-app\/homing\/releases\/tag\/v0\.3\.0"\}$/)]);

    expect(await gateway.config.write({ autoUpdate: false })).toMatchObject({ ok: true });
    expect((await overview(gateway)).update).toBeNull();
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  it('asks nothing with autoUpdate false', async () => {
    const fetch = feed('v0.3.0');
    const { gateway } = start({ autoUpdate: false }, { updateCheck: { fetch, firstCheckMs: 1 } });
    await gateway.ready;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fetch).not.toHaveBeenCalled();
    expect((await overview(gateway)).update).toBeNull();
  });

  it('asks nothing with HOMING_NO_UPDATE_CHECK=1', async () => {
    const fetch = feed('v0.3.0');
    const { gateway } = start({}, { env: { HOMING_NO_UPDATE_CHECK: '1' }, updateCheck: { fetch, firstCheckMs: 1 } });
    await gateway.ready;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fetch).not.toHaveBeenCalled();
  });

  it('in the tray app only shows what the main process reports', async () => {
    const fetch = feed('v0.3.0');
    const { gateway } = start({}, { mode: 'app', updateCheck: { fetch, firstCheckMs: 1 } });
    await gateway.ready;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fetch).not.toHaveBeenCalled();
    const notice = { version: '0.3.0', url: 'https://github.com/homing-app/homing/releases/tag/v0.3.0', ready: true };
    gateway.setUpdate(notice);
    expect((await overview(gateway)).update).toEqual(notice);
  });
});
