import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../logger';
import { LocalUploads } from './local-uploads';
import type { MediaBody, MediaRef } from './media';
import { MediaStore } from './media-store';
import { MediaUpkeep } from './media-upkeep';

const DAY = 86_400_000;
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(500, 3)]);
const body = (): MediaBody => ({ size: PNG.length, stream: (async function* () { yield PNG; })() });
const ref = (id: string): MediaRef => ({ id, kind: 'image', source: 'x' });

describe('MediaUpkeep', () => {
  let dataDir: string;
  let now: number;
  const clock = { now: () => now, monotonic: () => now };
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-upkeep-'));
    now = Date.now();
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('removes files past the retention time, counts what is kept, and marks the removed ones expired', async () => {
    const store = new MediaStore(dataDir, clock);
    const upkeep = new MediaUpkeep(store, new LocalUploads(dataDir), () => 30 * DAY, clock, silentLogger);
    const options = { signal: new AbortController().signal, maxBytes: 1_000_000 };
    const old = await store.fetch('s_a', ref('aaaaaaaaaaaaaaaa'), async () => body(), options);
    expect(upkeep.usage()).toEqual({ files: 1, bytes: PNG.length });
    // 31 days on: the first file is past 30 days; one fetched now is not.
    now += 31 * DAY;
    const fresh = await store.fetch('s_a', ref('bbbbbbbbbbbbbbbb'), async () => body(), options);
    expect(upkeep.sweep()).toBe(1);
    expect(existsSync(old.path)).toBe(false);
    expect(existsSync(fresh.path)).toBe(true);
    expect(store.state('s_a', ref('aaaaaaaaaaaaaaaa'))).toBe('expired');
    expect(upkeep.usage()).toEqual({ files: 1, bytes: PNG.length });
  });

  it('removes the window’s uploads no message took after a day', () => {
    const uploads = new LocalUploads(dataDir);
    uploads.append({ uploadId: 'left-behind', offset: 0, data: PNG, name: 'a.png', done: true }, 1_000_000);
    const upkeep = new MediaUpkeep(new MediaStore(dataDir), uploads, () => 30 * DAY, clock, silentLogger);
    upkeep.sweep();
    expect(() => uploads.offer('left-behind')).not.toThrow();
    now += 2 * DAY;
    upkeep.sweep();
    expect(() => uploads.offer('left-behind')).toThrow(/no complete upload/);
  });
});
