import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Gateway } from './gateway';
import { silentLogger } from './logger';

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'homing-gw-files-'));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

const start = async () => {
  const gateway = Gateway.start({ dataDir, mode: 'app', version: '0.0.0-test', logger: silentLogger, detectSleep: false, detectOllama: false });
  await gateway.ready;
  return gateway;
};

/** Every path under the data directory with its permission bits. */
function modes(): Record<string, number> {
  const found: Record<string, number> = { '.': statSync(dataDir).mode & 0o777 };
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      found[relative(dataDir, path)] = statSync(path).mode & 0o777;
      if (entry.isDirectory()) walk(path);
    }
  };
  walk(dataDir);
  return found;
}

describe('the data directory after a start', () => {
  it('is 0700 with every file 0600, even when a restored copy made them world-readable', async () => {
    const first = await start();
    await first.api.dispatch('sendLocalMessage', { text: 'hello' });
    await first.api.dispatch('setSecret', { name: 'agent.apiKey', value: 'sk-test-1234' });
    await first.stop();

    // A backup restored with loose modes.
    for (const [path, mode] of Object.entries(modes())) chmodSync(join(dataDir, path), mode | 0o077);

    const second = await start();
    try {
      const now = modes();
      expect(Object.keys(now)).toEqual(expect.arrayContaining(['homing.db', 'homing.db-wal', 'secrets.json', 'install-secret', 'sessions']));
      for (const [path, mode] of Object.entries(now)) {
        const isDir = statSync(join(dataDir, path)).isDirectory();
        expect([path, mode.toString(8)]).toEqual([path, isDir ? '700' : '600']);
      }
    } finally {
      await second.stop();
    }
  });
});
