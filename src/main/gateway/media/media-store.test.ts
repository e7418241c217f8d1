import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MediaFetchError, type MediaBody, type MediaOpener, type MediaRef } from './media';
import { MediaStore } from './media-store';

const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(2000, 7)]);
const ref = (over: Partial<MediaRef> = {}): MediaRef => ({ id: '0123456789abcdef', kind: 'image', source: 'file-1', ...over });
const NOW = { signal: new AbortController().signal, maxBytes: 1_000_000, backoffMs: [1, 1] };

/** A body that arrives in pieces of `piece` bytes. */
function body(bytes: Buffer, piece = 500, declared: number | 'unsaid' = bytes.length): MediaBody {
  return {
    ...(declared !== 'unsaid' ? { size: declared } : {}),
    stream: (async function* () {
      for (let at = 0; at < bytes.length; at += piece) yield bytes.subarray(at, at + piece);
    })(),
  };
}

describe('MediaStore', () => {
  let dataDir: string;
  let store: MediaStore;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-media-'));
    store = new MediaStore(dataDir);
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('fetches a file once into media/<session>/<id><ext>, 0600, typed by its bytes', async () => {
    let opened = 0;
    const open: MediaOpener = async () => {
      opened += 1;
      return { ...body(JPEG), mime: 'text/html' };
    };
    const file = await store.fetch('s_1', ref({ mime: 'application/octet-stream' }), open, NOW);
    expect(file.path).toBe(join(dataDir, 'media', 's_1', '0123456789abcdef.jpg'));
    expect(file.mime).toBe('image/jpeg');
    expect(readFileSync(file.path).equals(JPEG)).toBe(true);
    expect(statSync(file.path).mode & 0o777).toBe(0o600);
    expect(await store.fetch('s_1', ref(), open, NOW)).toEqual(file);
    expect(opened).toBe(1);
    expect(store.usage()).toEqual({ files: 1, bytes: JPEG.length });
  });

  it('never takes a declared image, HTML or SVG type for bytes that do not show it', async () => {
    for (const [id, mime] of [['1111111111111111', 'image/svg+xml'], ['2222222222222222', 'text/html'], ['3333333333333333', 'image/jpeg']] as const) {
      const file = await store.fetch('s_1', ref({ id, mime }), async () => body(Buffer.from('<svg onload="alert(1)"/>')), NOW);
      expect(file.mime).toBe('application/octet-stream');
      expect(file.path.endsWith('.bin')).toBe(true);
    }
  });

  it('refuses a file over the limit by its declared size, its served size, or while it streams, keeping nothing', async () => {
    let opened = 0;
    const open: MediaOpener = async () => {
      opened += 1;
      return body(JPEG, 100, 'unsaid');
    };
    await expect(store.fetch('s_1', ref({ size: 50_000_000 }), open, NOW)).rejects.toThrow(/too large \(50 MB; the limit is 1 MB\)/);
    expect(opened).toBe(0);
    await expect(store.fetch('s_1', ref(), async () => body(JPEG, 100, 5_000_000), NOW)).rejects.toMatchObject({ permanent: true });
    await expect(store.fetch('s_1', ref(), open, { ...NOW, maxBytes: 1000 })).rejects.toThrow(/too large/);
    expect(opened).toBe(1);
    expect(readdirSync(join(dataDir, 'media', 's_1'))).toEqual([]);
  });

  it('tries a temporary failure again and gives up on a permanent one at once', async () => {
    let calls = 0;
    const flaky: MediaOpener = async () => {
      calls += 1;
      if (calls < 3) throw new Error('ECONNRESET');
      return body(JPEG);
    };
    expect((await store.fetch('s_1', ref(), flaky, NOW)).size).toBe(JPEG.length);
    expect(calls).toBe(3);
    calls = 0;
    const gone: MediaOpener = async () => {
      calls += 1;
      throw new MediaFetchError('the file could not be downloaded (HTTP 404: deleted, expired or not allowed)', true);
    };
    await expect(store.fetch('s_1', ref({ id: 'aaaaaaaaaaaaaaaa' }), gone, NOW)).rejects.toThrow(/HTTP 404/);
    expect(calls).toBe(1);
    await expect(store.fetch('s_1', ref({ id: 'bbbbbbbbbbbbbbbb' }), undefined, NOW)).rejects.toThrow(/not set up to fetch files/);
  });

  it('fetches again a file whose download was cut (a .part left by a killed process)', async () => {
    const dir = join(dataDir, 'media', 's_1');
    await store.fetch('s_1', ref({ id: 'cccccccccccccccc' }), async () => body(JPEG), NOW);
    writeFileSync(join(dir, '0123456789abcdef.part'), JPEG.subarray(0, 10));
    expect(store.fetched('s_1', ref())).toBeUndefined();
    const file = await store.fetch('s_1', ref(), async () => body(JPEG), NOW);
    expect(readFileSync(file.path).equals(JPEG)).toBe(true);
    expect(existsSync(join(dir, '0123456789abcdef.part'))).toBe(false);
  });

  it('refuses a session id that would lead outside the media folder', async () => {
    for (const sessionId of ['../escape', '..', 'a/b', '/etc', 'con']) {
      await expect(store.fetch(sessionId, ref(), async () => body(JPEG), NOW)).rejects.toThrow(/unsafe|outside/);
    }
    expect(existsSync(join(dataDir, 'escape'))).toBe(false);
  });

  it('gives new references random ids and bounded, clean names', () => {
    const [a, b] = MediaStore.refsFor([
      { kind: 'document', source: 'x', name: 'report\u202e.pdf\u0000', mime: 'Application/PDF', size: -1 },
      { kind: 'image', source: 'y', mime: 'not a type', size: 12 },
    ]);
    expect(a).toMatchObject({ kind: 'document', name: 'report.pdf', mime: 'application/pdf' });
    expect(a).not.toHaveProperty('size');
    expect(b).toMatchObject({ kind: 'image', size: 12 });
    expect(b).not.toHaveProperty('mime');
    expect(a!.id).toMatch(/^[0-9a-f]{16}$/);
    expect(a!.id).not.toBe(b!.id);
    expect(MediaStore.refsFor(Array.from({ length: 30 }, () => ({ kind: 'image' as const, source: 's' })))).toHaveLength(10);
  });

  it('removes files fetched before the cutoff, with their notes, and leaves newer ones', async () => {
    const old = await store.fetch('s_old', ref({ id: 'dddddddddddddddd' }), async () => body(JPEG), NOW);
    store.saveDerived('s_old', ref({ id: 'dddddddddddddddd' }), 'transcript', 'hello');
    const fresh = await store.fetch('s_new', ref({ id: 'eeeeeeeeeeeeeeee' }), async () => body(JPEG), NOW);
    // Fetched "40 days ago": its note says when.
    const note = join(dataDir, 'media', 's_old', 'dddddddddddddddd.json');
    writeFileSync(note, JSON.stringify({ ...JSON.parse(readFileSync(note, 'utf8')), fetchedAt: Date.now() - 40 * 86_400_000 }));
    const stale = join(dataDir, 'media', 's_new', 'ffffffffffffffff.part');
    writeFileSync(stale, 'half');
    utimesSync(stale, new Date(Date.now() - 40 * 86_400_000), new Date(Date.now() - 40 * 86_400_000));
    expect(store.removeOlderThan(Date.now() - 30 * 86_400_000)).toBe(1);
    expect(existsSync(old.path)).toBe(false);
    expect(store.state('s_old', ref({ id: 'dddddddddddddddd' }))).toBe('expired');
    expect(store.derived('s_old', ref({ id: 'dddddddddddddddd' }), 'transcript')).toBe('hello');
    expect(store.state('s_new', ref({ id: 'eeeeeeeeeeeeeeee' }))).toBe('ready');
    expect(store.state('s_new', ref({ id: '9999999999999999' }))).toBe('pending');
    expect(store.usage()).toEqual({ files: 1, bytes: JPEG.length });
    expect(existsSync(fresh.path)).toBe(true);
    expect(existsSync(stale)).toBe(false);
    expect(store.fetched('s_old', ref({ id: 'dddddddddddddddd' }))).toBeUndefined();
  });
});
