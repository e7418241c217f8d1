import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../logger';
import { MediaFetchError, type MediaOpener, type MediaRef } from './media';
import { labelOf, mediaForAgent, type MediaForAgentOptions } from './media-for-agent';
import { MediaStore } from './media-store';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(1000, 5)]);
const WAV = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE'), Buffer.alloc(100)]);

describe('mediaForAgent', () => {
  let dataDir: string;
  let store: MediaStore;
  /** The files the fake platform serves, by source. */
  const files = new Map<string, Buffer>();
  const open: MediaOpener = async (offer) => {
    const bytes = files.get(offer.source);
    if (!bytes) throw new MediaFetchError('the file could not be downloaded (HTTP 404: deleted, expired or not allowed)', true);
    return { size: bytes.length, stream: (async function* () { yield bytes; })() };
  };
  let n = 0;
  const ref = (kind: MediaRef['kind'], source: string, extra: Partial<MediaRef> = {}): MediaRef => ({ id: (++n).toString(16).padStart(16, '0'), kind, source, ...extra });
  const options = (over: Partial<MediaForAgentOptions> = {}): MediaForAgentOptions => ({
    store,
    open,
    limits: { maxFileBytes: 1_000_000, maxMessageBytes: 2_000_000, documentChars: 100 },
    speech: undefined,
    images: true,
    signal: new AbortController().signal,
    logger: silentLogger,
    fetch: { attempts: 1 },
    ...over,
  });

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-media-agent-'));
    store = new MediaStore(dataDir);
    files.clear();
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('hands an image over as a file, and says so in words to an agent that takes none', async () => {
    files.set('p', PNG);
    const photo = ref('image', 'p');
    const seeing = await mediaForAgent('s_1', [photo], options());
    expect(seeing.lines).toEqual([]);
    expect(seeing.attachments).toEqual([expect.objectContaining({ kind: 'image', mime: 'image/png', size: PNG.length })]);
    const blind = await mediaForAgent('s_1', [photo], options({ images: false }));
    expect(blind.lines).toEqual(['[photo: not shown to you — this agent is not set up to take images]']);
  });

  it('treats a declared image whose bytes are none as a file, said so', async () => {
    files.set('fake', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'));
    const found = await mediaForAgent('s_1', [ref('image', 'fake', { name: 'cat.svg', mime: 'image/svg+xml' })], options());
    expect(found.attachments).toEqual([expect.objectContaining({ kind: 'document', mime: 'application/octet-stream' })]);
    expect(found.lines[0]).toMatch(/^\[image “cat\.svg”, 41 bytes: not shown to you — its bytes are not a JPEG, PNG, GIF or WebP image\]$/);
  });

  it('says a voice note is not transcribed when no speech server is set up, and passes its path on', async () => {
    files.set('v', WAV);
    const found = await mediaForAgent('s_1', [ref('voice', 'v', { durationS: 12.4 })], options());
    expect(found.lines).toEqual(['[voice note, 12 s: not transcribed — no speech server is set up in Homing]']);
    expect(found.attachments).toEqual([expect.objectContaining({ kind: 'voice', mime: 'audio/wav' })]);
  });

  it('reads a text document into the budget, and names the ones past it', async () => {
    files.set('a', Buffer.from('x'.repeat(80)));
    files.set('b', Buffer.from('y'.repeat(80)));
    const found = await mediaForAgent('s_1', [ref('document', 'a', { name: 'a.txt', mime: 'text/plain' }), ref('document', 'b', { name: 'b.txt', mime: 'text/plain' })], options());
    expect(found.lines[0]).toBe(`[text of the document “a.txt”]:\n${'x'.repeat(80)}`);
    expect(found.lines[1]).toMatch(/^\[document “b\.txt”, 80 bytes: its text is not shown — the message's other documents used the budget\]$/);
  });

  it('says why a file could not be fetched, and goes on with the others', async () => {
    files.set('p', PNG);
    const gone = ref('document', 'gone', { name: 'old.pdf' });
    const found = await mediaForAgent('s_1', [gone, ref('image', 'p')], options());
    expect(found.lines).toEqual(['[document “old.pdf”: could not be fetched — the file could not be downloaded (HTTP 404: deleted, expired or not allowed)]']);
    expect(found.attachments).toHaveLength(1);
    // The window says so too, in the same words; a later fetch that works clears it.
    expect(store.state('s_1', gone)).toBe('failed');
    expect(store.failure('s_1', gone)).toBe('the file could not be downloaded (HTTP 404: deleted, expired or not allowed)');
    files.set('gone', PNG);
    await mediaForAgent('s_1', [gone], options());
    expect([store.state('s_1', gone), store.failure('s_1', gone)]).toEqual(['ready', undefined]);
  });

  it('keeps all of a message’s files within its limit', async () => {
    files.set('p', PNG);
    const found = await mediaForAgent('s_1', [ref('image', 'p'), ref('image', 'p'), ref('image', 'p')], options({ limits: { maxFileBytes: 1_500, maxMessageBytes: 2_500, documentChars: 100 } }));
    expect(found.attachments).toHaveLength(2);
    expect(found.lines).toEqual(['[photo: could not be fetched — too large (1 KB; the limit is 484 bytes)]']);
  });

  it('names files for the agent by kind, name and length', () => {
    expect(labelOf({ kind: 'image' })).toBe('photo');
    expect(labelOf({ kind: 'image', name: 'x.png' })).toBe('image “x.png”');
    expect(labelOf({ kind: 'audio', name: 'song.mp3', durationS: 61 })).toBe('audio “song.mp3”, 61 s');
    expect(labelOf({ kind: 'document' })).toBe('document');
  });
});
