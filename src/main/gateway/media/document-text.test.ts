import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HELLO_PAGES, UTF8_TEXT, textPdf } from '../../../../test/fixtures/media/make-fixtures';
import { documentText, MAX_PDF_PAGES } from './document-text';

const fixture = (name: string): string => fileURLToPath(new URL(`../../../../test/fixtures/media/${name}`, import.meta.url));

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'homing-document-text-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function file(name: string, content: string | Buffer): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

describe('text from a text file', () => {
  it('reads a UTF-8 file named by its MIME type', async () => {
    expect(await documentText(fixture('notes.txt'), { mime: 'text/plain; charset=utf-8' }, 10_000)).toEqual({ kind: 'text', text: UTF8_TEXT, truncated: false });
  });

  it.each([
    [{ mime: 'application/json' }],
    [{ mime: 'application/ld+json' }],
    [{ mime: 'application/x-yaml' }],
    [{ mime: 'application/octet-stream', name: 'config.toml' }],
    [{ name: 'script.py' }],
    [{ name: 'DATA.CSV' }],
    [{ name: 'Makefile' }],
  ])('knows %j is text', async (about) => {
    expect(await documentText(fixture('notes.txt'), about, 10_000)).toMatchObject({ kind: 'text', text: UTF8_TEXT });
  });

  it('cuts at maxChars and says so, never through a surrogate pair', async () => {
    expect(await documentText(fixture('notes.txt'), { name: 'notes.txt' }, 5)).toEqual({ kind: 'text', text: 'Grüße', truncated: true });
    // '🌸' is two UTF-16 units: a cut after its first one keeps neither.
    const at = UTF8_TEXT.indexOf('🌸');
    expect(await documentText(fixture('notes.txt'), { name: 'notes.txt' }, at + 1)).toEqual({ kind: 'text', text: UTF8_TEXT.slice(0, at), truncated: true });
  });

  it('reads only the bytes maxChars can take from a large file', async () => {
    const path = await file('big.log', 'é'.repeat(3_000_000));
    const result = await documentText(path, { name: 'big.log' }, 1_000);
    expect(result).toEqual({ kind: 'text', text: 'é'.repeat(1_000), truncated: true });
  });

  it('refuses a binary file or one that is not UTF-8 as "not text"', async () => {
    expect(await documentText(fixture('binary.bin'), { name: 'image.txt' }, 1_000)).toEqual({ kind: 'none', why: 'not text (not valid UTF-8)' });
    const nul = await file('nul.txt', 'abc\0def');
    expect(await documentText(nul, { mime: 'text/plain' }, 1_000)).toEqual({ kind: 'none', why: 'not text (it contains NUL bytes)' });
    const latin1 = await file('latin1.txt', Buffer.from('Gr\xfc\xdfe', 'latin1'));
    expect(await documentText(latin1, { mime: 'text/plain' }, 1_000)).toMatchObject({ kind: 'none', why: expect.stringMatching(/^not text/) });
  });

  it('does not read what is neither text nor a PDF', async () => {
    expect(await documentText(fixture('binary.bin'), { mime: 'image/png', name: 'photo.png' }, 1_000)).toEqual({ kind: 'none', why: 'not a text document or a PDF (image/png)' });
  });

  it('says when the file cannot be read', async () => {
    expect(await documentText(join(dir, 'gone.txt'), { mime: 'text/plain' }, 1_000)).toEqual({ kind: 'none', why: 'could not be read (ENOENT)' });
  });
});

describe('text from a PDF', () => {
  const helloText = HELLO_PAGES.map((lines) => lines.join('\n')).join('\n\n');

  it('extracts the text of every page, with the page count', async () => {
    expect(await documentText(fixture('hello.pdf'), { mime: 'application/pdf', name: 'hello.pdf' }, 10_000)).toEqual({
      kind: 'text',
      text: helloText,
      truncated: false,
      pages: 2,
    });
  });

  it('knows a PDF by its first bytes whatever it was sent as', async () => {
    expect(await documentText(fixture('hello.pdf'), { mime: 'application/octet-stream', name: 'download' }, 10_000)).toMatchObject({ kind: 'text', pages: 2 });
  });

  it('cuts at maxChars and says so', async () => {
    expect(await documentText(fixture('hello.pdf'), { mime: 'application/pdf' }, 10)).toEqual({ kind: 'text', text: 'Homing tes', truncated: true, pages: 2 });
  });

  it(`reads at most ${MAX_PDF_PAGES} pages of a longer PDF`, async () => {
    const pages = Array.from({ length: MAX_PDF_PAGES + 10 }, (_, i) => [`Page ${i + 1}`]);
    const path = await file('long.pdf', textPdf(pages));
    const result = await documentText(path, { mime: 'application/pdf' }, 1_000_000);
    expect(result).toMatchObject({ kind: 'text', truncated: true, pages: MAX_PDF_PAGES + 10 });
    const text = result.kind === 'text' ? result.text : '';
    expect(text).toContain(`Page ${MAX_PDF_PAGES}`);
    expect(text).not.toContain(`Page ${MAX_PDF_PAGES + 1}`);
  });

  it('says a PDF of images has no text layer', async () => {
    expect(await documentText(fixture('scanned.pdf'), { mime: 'application/pdf' }, 10_000)).toEqual({ kind: 'none', why: 'no text layer (scanned?)' });
  });

  it('says an encrypted PDF needs a password', async () => {
    expect(await documentText(fixture('encrypted.pdf'), { mime: 'application/pdf' }, 10_000)).toEqual({ kind: 'none', why: 'an encrypted PDF (it needs a password)' });
  });

  it('says a damaged PDF is damaged, and one that is no PDF at all cannot be read', async () => {
    expect(await documentText(fixture('broken.pdf'), { mime: 'application/pdf' }, 10_000)).toEqual({ kind: 'none', why: 'a damaged PDF (its structure could not be read)' });
    const notPdf = await documentText(fixture('notes.txt'), { mime: 'application/pdf' }, 10_000);
    expect(notPdf).toMatchObject({ kind: 'none' });
    const empty = await documentText(await file('empty.pdf', ''), { mime: 'application/pdf' }, 10_000);
    expect(empty).toMatchObject({ kind: 'none' });
  });

  it('survives random bytes after a PDF header', async () => {
    const bytes = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256))]);
    const result = await documentText(await file('noise.pdf', bytes), {}, 10_000);
    expect(result.kind).toBe('none');
  });
});
