import { open, readFile, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { loadOnce } from '../load-once';

/**
 * The text of a document someone sent (a text file, a PDF), for the agent to
 * read with the message. Never throws: a file that yields no text is `none`
 * with the reason in words ("not text", "no text layer (scanned?)"), which the
 * agent is told instead.
 *
 * Only what is needed is read: a text file up to the bytes `maxChars` can take,
 * a PDF up to MAX_PDF_PAGES pages and PDF_TIME_LIMIT_MS.
 */

export type DocumentText =
  | { readonly kind: 'text'; readonly text: string; readonly truncated: boolean; readonly pages?: number }
  | { readonly kind: 'none'; readonly why: string };

export interface DocumentAbout {
  /** The MIME type as checked at intake. */
  readonly mime?: string | undefined;
  /** The file's name as the sender gave it (its extension is a hint). */
  readonly name?: string | undefined;
}

/** Pages read from a PDF at most; a longer one is cut (and says so). */
export const MAX_PDF_PAGES = 50;
/** pdf.js works on the gateway's thread: a pathological file must not hold it for long. Checked between pages. */
export const PDF_TIME_LIMIT_MS = 15_000;
/** A PDF is read whole; beyond this it is not opened at all. */
export const MAX_PDF_BYTES = 50 * 1024 * 1024;

const TEXT_MIMES = new Set([
  'application/json',
  'application/xml',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/csv',
  'application/x-ndjson',
  'application/javascript',
  'application/x-sh',
  'application/sql',
]);

const TEXT_EXTENSIONS = new Set(
  (
    'txt text md markdown rst csv tsv json jsonl ndjson yaml yml xml html htm log ini cfg conf toml env properties ' +
    'js mjs cjs jsx ts mts cts tsx py rb go rs java kt kts c h cc cpp hpp cs swift php pl lua r sql sh bash zsh fish ps1 ' +
    'css scss less vue svelte tex srt vtt diff patch gitignore dockerfile makefile gradle'
  ).split(' '),
);

/**
 * pdf.js as unpdf builds it for servers (no worker, no canvas, runs on Node
 * 20), loaded on the first PDF: ~2 MB the gateway's start-up does not need.
 */
const loadPdfJs = loadOnce(async () => (await import('unpdf')).getResolvedPDFJS());

export async function documentText(path: string, about: DocumentAbout, maxChars: number): Promise<DocumentText> {
  try {
    const head = await readHead(path, 1024);
    // The magic wins over the claims: a PDF sent as application/octet-stream is still a PDF.
    if (head.includes(Buffer.from('%PDF-')) || baseMime(about.mime) === 'application/pdf') return await pdfText(path, maxChars);
    if (looksLikeText(about)) return await plainText(path, maxChars);
    return { kind: 'none', why: `not a text document or a PDF${about.mime ? ` (${about.mime})` : ''}` };
  } catch (error) {
    return { kind: 'none', why: `could not be read (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  }
}

function baseMime(mime: string | undefined): string {
  return (mime ?? '').split(';')[0]!.trim().toLowerCase();
}

function looksLikeText(about: DocumentAbout): boolean {
  const mime = baseMime(about.mime);
  if (mime.startsWith('text/') || TEXT_MIMES.has(mime) || mime.endsWith('+json') || mime.endsWith('+xml') || mime.endsWith('+yaml')) return true;
  const name = (about.name ?? '').toLowerCase();
  const ext = extname(name).slice(1) || name; // `Makefile`, `Dockerfile`: the name is the type
  return TEXT_EXTENSIONS.has(ext);
}

async function readHead(path: string, bytes: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Up to `maxChars` characters of a UTF-8 file. Only the bytes that many
 * characters can take are read (4 per character at most); a cut through a
 * character at that edge is not an encoding error (the decoder streams).
 */
async function plainText(path: string, maxChars: number): Promise<DocumentText> {
  const cap = maxChars * 4;
  const size = (await stat(path)).size;
  const bytes = await readHead(path, Math.min(size, cap + 1));
  const cut = bytes.length > cap;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let text: string;
  try {
    text = decoder.decode(cut ? bytes.subarray(0, cap) : bytes, { stream: cut });
  } catch {
    return { kind: 'none', why: 'not text (not valid UTF-8)' };
  }
  if (text.includes('\0')) return { kind: 'none', why: 'not text (it contains NUL bytes)' };
  const kept = cutAt(text, maxChars);
  return { kind: 'text', text: kept, truncated: cut || kept.length < text.length };
}

/** At most `maxChars` UTF-16 units, never half of a surrogate pair. */
function cutAt(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const end = /[\uD800-\uDBFF]/.test(text.charAt(maxChars - 1)) ? maxChars - 1 : maxChars;
  return text.slice(0, end);
}

interface PdfTextItem {
  readonly str?: string;
  readonly hasEOL?: boolean;
}

async function pdfText(path: string, maxChars: number): Promise<DocumentText> {
  const size = (await stat(path)).size;
  if (size > MAX_PDF_BYTES) return { kind: 'none', why: `a PDF too large to read (over ${MAX_PDF_BYTES / 1024 / 1024} MB)` };
  let pdfjs: Awaited<ReturnType<typeof import('unpdf').getResolvedPDFJS>>;
  try {
    pdfjs = await loadPdfJs();
  } catch (error) {
    return { kind: 'none', why: `the PDF reader could not be loaded (${messageOf(error)})` };
  }
  const started = Date.now();
  // Text only: no fonts are loaded or rendered, no scripts evaluated. verbosity 0:
  // pdf.js would otherwise print its warnings about odd files to the gateway's console.
  const task = pdfjs.getDocument({ data: new Uint8Array(await readFile(path)), verbosity: 0, isEvalSupported: false, disableFontFace: true, useSystemFonts: false });
  try {
    let pdf: Awaited<typeof task.promise>;
    try {
      pdf = await withTimeout(task.promise, PDF_TIME_LIMIT_MS);
    } catch (error) {
      return { kind: 'none', why: pdfOpenError(error) };
    }
    const pages: string[] = [];
    let chars = 0;
    let lastRead = 0;
    const last = Math.min(pdf.numPages, MAX_PDF_PAGES);
    for (let n = 1; n <= last && chars < maxChars; n++) {
      const remaining = PDF_TIME_LIMIT_MS - (Date.now() - started);
      if (remaining <= 0) break;
      const page = await withTimeout(pdf.getPage(n), remaining);
      const content = await withTimeout(page.getTextContent(), remaining);
      page.cleanup();
      const text = (content.items as PdfTextItem[])
        .map((item) => (item.str ?? '') + (item.hasEOL ? '\n' : ''))
        .join('')
        .trim();
      pages.push(text);
      chars += text.length + 2;
      lastRead = n;
    }
    const all = pages.filter((text) => text !== '').join('\n\n');
    if (all === '') {
      return { kind: 'none', why: lastRead < pdf.numPages ? `no text layer in its first ${lastRead} pages (scanned?)` : 'no text layer (scanned?)' };
    }
    const text = cutAt(all, maxChars);
    return { kind: 'text', text, truncated: lastRead < pdf.numPages || text.length < all.length, pages: pdf.numPages };
  } catch (error) {
    return { kind: 'none', why: error instanceof PdfTimeout ? 'the PDF took too long to read' : `the PDF could not be read (${messageOf(error)})` };
  } finally {
    // Also stops a parse still running after a timeout.
    await task.destroy().catch(() => undefined);
  }
}

/** pdf.js names its exceptions: a password wanted, a file that is no PDF, a broken one. */
function pdfOpenError(error: unknown): string {
  if (error instanceof PdfTimeout) return 'the PDF took too long to open';
  const name = (error as { name?: unknown } | undefined)?.name;
  if (name === 'PasswordException') return 'an encrypted PDF (it needs a password)';
  if (name === 'InvalidPDFException') return 'a damaged PDF (its structure could not be read)';
  return `the PDF could not be read (${messageOf(error)})`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

class PdfTimeout extends Error {}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new PdfTimeout()), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
