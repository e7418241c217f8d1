import type { LengthUnit } from './adapter';
import { classifyLine, type OpenFence } from './fences';
import { inlineSpans } from '../format/markdown';
import { graphemes, measure } from './text-measure';

/**
 * How good a place is to cut a message, best first. `insideDelimiter` is a cut
 * through a fence line (```` ```ts ````) or inside a formatted span, used only
 * when nothing else fits; `opensFence`, a cut that would start the next chunk
 * with a fence-like run the text never had as a fence (the platform would show
 * the rest of that chunk as code), only when not even such a cut fits.
 */
export const Cut = { paragraph: 4, line: 3, sentence: 2, word: 1, anywhere: 0, insideDelimiter: -1, opensFence: -2 } as const;

/**
 * A text prepared for splitting: the pieces that must never be torn apart ("atoms":
 * grapheme clusters, or single code points for a cluster too big for any chunk), and
 * for every boundary between atoms (boundary i sits before atom i) what a cut there
 * costs and means.
 */
export interface TextLayout {
  readonly atoms: readonly string[];
  /** UTF-16 offset of boundary i in the original text (offsets[atoms.length] = text.length). */
  readonly offsets: readonly number[];
  /** Size of atoms [0, i) in the platform's unit. */
  readonly sizeBefore: readonly number[];
  /** The boundary a chunk ending at i really ends at once its trailing whitespace is trimmed. */
  readonly trimmedEnd: readonly number[];
  readonly priority: readonly number[];
  readonly lineStart: readonly boolean[];
  /** The code fence open at boundary i (after every line complete before it), if any. */
  readonly fence: readonly (OpenFence | undefined)[];
  readonly whitespace: readonly boolean[];
}

interface LineInfo {
  readonly start: number;
  /** End of the line's content, before `\r\n` / `\n`. */
  readonly contentEnd: number;
  readonly blank: boolean;
  readonly opens: boolean;
  readonly closes: boolean;
  readonly fenceBefore: OpenFence | undefined;
  readonly fenceAfter: OpenFence | undefined;
}

const SENTENCE_END = /^[.!?…]$/u;
const CLOSING_PUNCTUATION = /^["'”’)\]»]$/u;
const CJK_SENTENCE_END = /^[。！？]$/u;

export function layoutText(text: string, unit: LengthUnit, atomCap: number, withFences: boolean): TextLayout {
  const atoms: string[] = [];
  for (const cluster of graphemes(text)) {
    // A cluster bigger than any chunk could hold (zalgo text, long emoji sequences
    // at tiny limits) is split between code points: never inside one.
    if (measure(cluster, unit) > atomCap) atoms.push(...Array.from(cluster));
    else atoms.push(cluster);
  }
  const lines = describeLines(text, withFences);

  const count = atoms.length;
  const offsets: number[] = [0];
  const sizeBefore: number[] = [0];
  const trimmedEnd: number[] = [0];
  const whitespace: boolean[] = [];
  for (let i = 0; i < count; i++) {
    const atom = atoms[i]!;
    const ws = /^\s+$/u.test(atom);
    whitespace.push(ws);
    offsets.push(offsets[i]! + atom.length);
    sizeBefore.push(sizeBefore[i]! + measure(atom, unit));
    trimmedEnd.push(ws ? trimmedEnd[i]! : i + 1);
  }

  const priority: number[] = [];
  const lineStart: boolean[] = [];
  const fence: (OpenFence | undefined)[] = [];
  let lineIndex = 0;
  let lastContentAtom = -1;
  // Inline Markdown spans of the current line (Markdown mode, outside code blocks): a cut inside one is a last resort.
  let spansOf = -1;
  let inside: Uint8Array | undefined;
  for (let i = 0; i <= count; i++) {
    const offset = offsets[i]!;
    while (lineIndex < lines.length - 1 && lines[lineIndex + 1]!.start <= offset) lineIndex++;
    const line = lines[lineIndex]!;
    const insideSpan = (at: number) => {
      if (spansOf !== lineIndex) {
        spansOf = lineIndex;
        // Only a line longer than half a chunk is ever cut inside (a line break is preferred); shorter ones are not parsed.
        inside = line.contentEnd - line.start > atomCap / 2 ? spanMask(text.slice(line.start, line.contentEnd)) : undefined;
      }
      return inside !== undefined && inside[at] === 1;
    };
    const atLineStart = offset === line.start;
    lineStart.push(atLineStart);
    fence.push(atLineStart || offset < line.contentEnd ? line.fenceBefore : line.fenceAfter);
    if (atLineStart) {
      priority.push(lineStartPriority(lines, lineIndex));
    } else if (offset < line.contentEnd && (line.opens || line.closes)) {
      priority.push(Cut.insideDelimiter);
    } else if (withFences && startsLikeFence(text, offset)) {
      // The next chunk would begin with ``` and the platform would see a fence that
      // the text never had.
      priority.push(Cut.opensFence);
    } else if (withFences && !line.fenceBefore && insideSpan(offset - line.start)) {
      priority.push(Cut.insideDelimiter);
    } else {
      priority.push(inlinePriority(atoms, whitespace, i, lastContentAtom));
    }
    if (i < count && !whitespace[i]) lastContentAtom = i;
  }
  return { atoms, offsets, sizeBefore, trimmedEnd, priority, lineStart, fence, whitespace };
}

const FENCE_AHEAD = /[ \t]*(?:`{3}|~{3})/y;

/** Per UTF-16 offset of a line, 1 where a cut would fall inside a formatted span. */
function spanMask(line: string): Uint8Array {
  const mask = new Uint8Array(line.length + 1);
  for (const [start, end] of inlineSpans(line)) mask.fill(1, start + 1, end);
  return mask;
}

function startsLikeFence(text: string, offset: number): boolean {
  FENCE_AHEAD.lastIndex = offset;
  return FENCE_AHEAD.test(text);
}

function lineStartPriority(lines: readonly LineInfo[], index: number): number {
  const line = lines[index]!;
  const previous = lines[index - 1];
  if (!previous) return Cut.paragraph;
  // A cut right after an opening fence or right before a closing one leaves an empty
  // code block in one of the chunks: allowed, but as a last resort.
  if (previous.opens || line.closes) return Cut.anywhere;
  if ((previous.blank && !line.blank) || previous.closes || line.opens) return Cut.paragraph;
  return Cut.line;
}

function inlinePriority(atoms: readonly string[], whitespace: readonly boolean[], i: number, lastContent: number): number {
  const before = atoms[i - 1];
  if (before === undefined || i >= atoms.length) return Cut.anywhere;
  if (CJK_SENTENCE_END.test(before)) return Cut.sentence;
  if (!whitespace[i - 1] || whitespace[i]) return Cut.anywhere;
  let end = atoms[lastContent];
  if (end !== undefined && CLOSING_PUNCTUATION.test(end)) end = atoms[lastContent - 1];
  return end !== undefined && SENTENCE_END.test(end) ? Cut.sentence : Cut.word;
}

function describeLines(text: string, withFences: boolean): LineInfo[] {
  const lines: LineInfo[] = [];
  let open: OpenFence | undefined;
  let start = 0;
  for (;;) {
    const newline = text.indexOf('\n', start);
    const end = newline < 0 ? text.length : newline;
    const contentEnd = end > start && text[end - 1] === '\r' ? end - 1 : end;
    const content = text.slice(start, contentEnd);
    const kind = withFences ? classifyLine(content, open) : { kind: 'content' as const };
    const fenceBefore = open;
    if (kind.kind === 'open') open = kind.fence;
    else if (kind.kind === 'close') open = undefined;
    lines.push({
      start,
      contentEnd,
      blank: content.trim() === '',
      opens: kind.kind === 'open',
      closes: kind.kind === 'close',
      fenceBefore,
      fenceAfter: open,
    });
    if (newline < 0) return lines;
    start = newline + 1;
  }
}
