import { classifyLine, type OpenFence } from '../platforms/fences';

/**
 * The agent's Markdown as a small tree, parsed once and rendered per platform
 * (telegram-html.ts; plain-text.ts for platforms without markup). The subset is
 * what chat replies use: paragraphs and line breaks as written, headings,
 * quotes, bullet and numbered lists, fenced code blocks, tables, and inline
 * bold, italic, strikethrough, code, links and images (taken as links to them).
 *
 * Invariant: every character of the input is either in a text/code node or is
 * markup that a node stands for (delimiters, a link's brackets, a fence line);
 * markup that does not close (`**open`) stays text. So a renderer that prints
 * every node loses nothing, and can only produce the formatting the agent wrote.
 */

export type Inline =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'bold' | 'italic' | 'strike'; readonly children: readonly Inline[] }
  | { readonly type: 'code'; readonly text: string }
  | { readonly type: 'link'; readonly url: string; readonly children: readonly Inline[] };

export type Block =
  /** One line of text; `marker` is a list item's bullet or number as the reader should see it. */
  | { readonly type: 'line'; readonly indent: string; readonly marker: string; readonly children: readonly Inline[] }
  | { readonly type: 'heading'; readonly children: readonly Inline[] }
  /** `info` is the fence's info string (a language tag, usually), trimmed. */
  | { readonly type: 'code-block'; readonly info: string; readonly text: string }
  | { readonly type: 'quote'; readonly blocks: readonly Block[] }
  | { readonly type: 'rule'; readonly width: number }
  /** A GFM table: the header row first; `sourceLength` is the Markdown's length, so a renderer can keep within it. */
  | { readonly type: 'table'; readonly rows: readonly (readonly Inline[][])[]; readonly sourceLength: number };

/** Blocks in order; a renderer joins them with line breaks. */
export type MarkdownDocument = readonly Block[];

/** How deep emphasis may nest before the rest is taken as text (bounds recursion on hostile input). */
const MAX_DEPTH = 8;
const SAFE_URL = /^(?:https?:\/\/|mailto:|tg:\/\/)[^\s<>"]+$/i;

/** A thematic break as text: a line of em dashes about as long as the source's, 3 to 24. */
export function ruleLine(width: number): string {
  return '—'.repeat(Math.max(3, Math.min(width, 24)));
}

export function parseMarkdown(source: string): MarkdownDocument {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  return parseBlocks(lines, 0);
}

function parseBlocks(lines: readonly string[], depth: number): Block[] {
  const blocks: Block[] = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index]!;
    const fence = classifyLine(line, undefined);
    if (fence.kind === 'open') {
      const body: string[] = [];
      const open: OpenFence = fence.fence;
      index++;
      while (index < lines.length) {
        if (classifyLine(lines[index]!, open).kind === 'close') {
          index++;
          break;
        }
        body.push(lines[index]!);
        index++;
      }
      blocks.push({ type: 'code-block', info: fence.fence.info, text: body.join('\n') });
      continue;
    }
    if (/^ {0,3}>/.test(line) && depth < MAX_DEPTH) {
      const quoted: string[] = [];
      while (index < lines.length && /^ {0,3}>/.test(lines[index]!)) {
        quoted.push(lines[index]!.replace(/^ {0,3}> ?/, ''));
        index++;
      }
      blocks.push({ type: 'quote', blocks: parseBlocks(quoted, depth + 1) });
      continue;
    }
    const table = parseTable(lines, index);
    if (table) {
      blocks.push(table.block);
      index = table.next;
      continue;
    }
    blocks.push(parseLine(line));
    index++;
  }
  return blocks;
}

const TABLE_DELIMITER = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

/**
 * A GFM table at `at`: a header row, a delimiter row (`|---|:--:|`) with as
 * many cells, then the rows that follow with a `|` in them. Rows are cut or
 * padded to the header's cells, as GFM does.
 */
function parseTable(lines: readonly string[], at: number): { block: Block; next: number } | undefined {
  const header = lines[at]!;
  const delimiter = lines[at + 1];
  if (!header.includes('|') || delimiter === undefined || !delimiter.includes('|') || !TABLE_DELIMITER.test(delimiter)) return undefined;
  const width = tableCells(header).length;
  if (tableCells(delimiter).length !== width) return undefined;
  const source = [header, delimiter];
  let next = at + 2;
  while (next < lines.length && lines[next]!.includes('|') && lines[next]!.trim() !== '') source.push(lines[next++]!);
  const cellRows = [header, ...source.slice(2)].map(tableCells);
  const columns = Math.max(...cellRows.map((cells) => cells.length));
  const rows = cellRows.map((cells) => [...cells, ...Array<string>(columns - cells.length).fill('')].map((cell) => parseInline(cell)));
  return { block: { type: 'table', rows, sourceLength: source.join('\n').length }, next };
}

/** A row's cells: split at each `|` not escaped, the outer pipes dropped, trimmed. */
function tableCells(row: string): string[] {
  const cells = row.trim().split(/(?<!\\)\|/);
  if (cells[0] === '') cells.shift();
  if (cells.length > 0 && cells.at(-1) === '' && row.trim().endsWith('|')) cells.pop();
  return cells.map((cell) => cell.trim());
}

/**
 * A table as lines of text for a platform without tables (in a monospace
 * block where it has one): columns padded to line up, a rule under the
 * header. When that would be longer than the Markdown, the cells are only
 * separated by `|` (so a reply's visible text never outgrows its Markdown).
 */
export function tableText(table: Extract<Block, { type: 'table' }>, cellText: (cell: readonly Inline[]) => string): string {
  const rows = table.rows.map((row) => row.map(cellText));
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => [...row[column]!].length)));
  const pad = (row: readonly string[]) => row.map((cell, column) => cell + ' '.repeat(widths[column]! - [...cell].length)).join(' | ').trimEnd();
  const aligned = [pad(rows[0]!), widths.map((width) => '-'.repeat(width)).join('-|-'), ...rows.slice(1).map(pad)].join('\n');
  return aligned.length <= table.sourceLength ? aligned : rows.map((row) => row.join('|')).join('\n');
}

function parseLine(line: string): Block {
  const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
  if (heading) return { type: 'heading', children: parseInline(heading[1]!) };
  const rule = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/.exec(line);
  if (rule) return { type: 'rule', width: Math.min(line.trim().length, 24) };
  const bullet = /^([ \t]*)[-*+][ \t]+(.*)$/.exec(line);
  if (bullet) return { type: 'line', indent: bullet[1]!, marker: '• ', children: parseInline(bullet[2]!) };
  const numbered = /^([ \t]*)(\d{1,9}[.)])[ \t]+(.*)$/.exec(line);
  if (numbered) return { type: 'line', indent: numbered[1]!, marker: `${numbered[2]!} `, children: parseInline(numbered[3]!) };
  return { type: 'line', indent: '', marker: '', children: parseInline(line) };
}

/**
 * Where the formatted spans of one line are (`**bold**`, `` `code` ``, links),
 * as UTF-16 [start, end) ranges of the line: a splitter that cuts a long line
 * avoids cutting inside them, so no chunk carries half an entity.
 */
export function inlineSpans(line: string): [number, number][] {
  const spans: [number, number][] = [];
  parseInline(line, 0, spans);
  return spans;
}

export function parseInline(text: string, depth = 0, spans?: [number, number][]): Inline[] {
  const out: Inline[] = [];
  let buffer = '';
  const flush = () => {
    if (buffer) out.push({ type: 'text', text: buffer });
    buffer = '';
  };
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    if (char === '\\' && i + 1 < text.length && /[!-/:-@[-`{-~]/.test(text[i + 1]!)) {
      buffer += text[i + 1];
      i += 2;
      continue;
    }
    if (char === '`') {
      const run = runLength(text, i, '`');
      const close = findBacktickRun(text, i + run, run);
      if (close >= 0) {
        flush();
        let code = text.slice(i + run, close);
        if (code.length > 2 && code.startsWith(' ') && code.endsWith(' ') && code.trim() !== '') code = code.slice(1, -1);
        out.push({ type: 'code', text: code });
        spans?.push([i, close + run]);
        i = close + run;
        continue;
      }
      buffer += text.slice(i, i + run);
      i += run;
      continue;
    }
    // An image: a link to it, its alt text the label (a chat reply cannot embed it).
    if (char === '!' && text[i + 1] === '[' && depth < MAX_DEPTH) {
      const image = matchLink(text, i + 1, true);
      if (image) {
        flush();
        out.push({ type: 'link', url: image.url, children: parseInline(image.label || image.url, depth + 1) });
        spans?.push([i, image.end]);
        i = image.end;
        continue;
      }
    }
    if (char === '[' && depth < MAX_DEPTH) {
      const link = matchLink(text, i);
      if (link) {
        flush();
        out.push({ type: 'link', url: link.url, children: parseInline(link.label, depth + 1) });
        spans?.push([i, link.end]);
        i = link.end;
        continue;
      }
    }
    if ((char === '*' || char === '_' || char === '~') && depth < MAX_DEPTH) {
      const span = matchEmphasis(text, i);
      if (span) {
        flush();
        out.push({ type: span.type, children: parseInline(text.slice(span.contentStart, span.contentEnd), depth + 1) });
        spans?.push([i, span.end]);
        i = span.end;
        continue;
      }
      const run = runLength(text, i, char);
      buffer += text.slice(i, i + run);
      i += run;
      continue;
    }
    buffer += char;
    i++;
  }
  flush();
  return out;
}

function runLength(text: string, at: number, char: string): number {
  let end = at;
  while (text[end] === char) end++;
  return end - at;
}

function findBacktickRun(text: string, from: number, length: number): number {
  for (let i = text.indexOf('`', from); i >= 0; i = text.indexOf('`', i + 1)) {
    const run = runLength(text, i, '`');
    if (run === length) return i;
    i += run - 1;
  }
  return -1;
}

/** `[label](url)` at `at`; an image's alt text may be empty. */
function matchLink(text: string, at: number, image = false): { label: string; url: string; end: number } | undefined {
  const close = text.indexOf('](', at + 1);
  if (close < 0) return undefined;
  const label = text.slice(at + 1, close);
  if ((label === '' && !image) || label.includes(']') || label.includes('[')) return undefined;
  const urlEnd = text.indexOf(')', close + 2);
  if (urlEnd < 0) return undefined;
  const url = text.slice(close + 2, urlEnd);
  if (!SAFE_URL.test(url)) return undefined;
  return { label, url, end: urlEnd + 1 };
}

const isSpace = (char: string | undefined) => char === undefined || /\s/u.test(char);
const isWordChar = (char: string | undefined) => char !== undefined && /[\p{L}\p{N}]/u.test(char);

/**
 * `**bold**`, `__bold__`, `*italic*`, `_italic_`, `~~strike~~` starting at `at`:
 * the opener is followed by a non-space, the closer preceded by one, and `_`
 * only at word edges (snake_case stays text). Undefined when it does not close.
 */
function matchEmphasis(
  text: string,
  at: number,
): { type: 'bold' | 'italic' | 'strike'; contentStart: number; contentEnd: number; end: number } | undefined {
  const char = text[at]!;
  const run = runLength(text, at, char);
  const width = char === '~' ? 2 : run >= 2 ? 2 : 1;
  if (char === '~' && run < 2) return undefined;
  if (char === '_' && isWordChar(text[at - 1])) return undefined;
  const contentStart = at + width;
  if (isSpace(text[contentStart])) return undefined;
  const delimiter = char.repeat(width);
  for (let j = text.indexOf(delimiter, contentStart + 1); j >= 0; j = text.indexOf(delimiter, j + 1)) {
    // Within a run of closers, the last ones close (`***x***`).
    let close = j;
    while (text[close + width] === char && runLength(text, close, char) > width) close++;
    if (isSpace(text[close - 1])) continue;
    if (char === '_' && isWordChar(text[close + width])) continue;
    // A single `*` closer must not be half of a `**`.
    if (width === 1 && (text[close + 1] === char || text[close - 1] === char)) continue;
    return { type: char === '~' ? 'strike' : width === 2 ? 'bold' : 'italic', contentStart, contentEnd: close, end: close + width };
  }
  return undefined;
}
