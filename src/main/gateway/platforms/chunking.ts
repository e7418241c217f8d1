import type { MessageLimits } from './adapter';
import type { OpenFence } from './fences';
import { Cut, layoutText, type TextLayout } from './text-layout';
import { measure, minimumLimit } from './text-measure';

/**
 * Splitting a reply into chunks that each fit a platform's message limit.
 *
 * Invariants (checked by a property test in all three units):
 * - every chunk measures at most `limits.maxLength` in `limits.unit`;
 * - no chunk is empty, and no cut falls inside a code point or (unless a single
 *   cluster is bigger than a chunk) a grapheme cluster;
 * - no chunk leaves a code fence open: a block that must be split is closed at the
 *   end of one chunk and reopened, with its language tag, at the start of the next,
 *   and those added characters count against the limit (this holds whenever each
 *   fence line fits in half a chunk; a longer one is cut like text);
 * - the original text is every chunk's body in order, with only whitespace between
 *   bodies (trailing whitespace and the line breaks at a cut are dropped;
 *   indentation at the start of a line is kept, since code needs it).
 * Cuts prefer a paragraph break, then a line break, a sentence end, a space, and
 * only then anywhere, as long as the better cut keeps at least half of the chunk.
 */

export interface ChunkPart {
  /** The chunk to send: `reopened + body + closed`. */
  readonly text: string;
  /** The body's UTF-16 range in the original text. */
  readonly start: number;
  readonly end: number;
  /** The fence line added to reopen a block split by the previous cut (`"```ts\n"`), or ''. */
  readonly reopened: string;
  /** The fence line added to close a block this cut splits (`"\n```"`), or ''. */
  readonly closed: string;
}

export function splitMessage(text: string, limits: MessageLimits): string[] {
  return splitMessageParts(text, limits).map((part) => part.text);
}

export function splitMessageParts(text: string, limits: MessageLimits): ChunkPart[] {
  return split(text, limits, true);
}

/**
 * The same cuts without code-fence handling: for text that is already one protocol
 * line (an IRC line), where a fence is just characters.
 */
export function splitPlainText(text: string, limits: MessageLimits): string[] {
  return split(text, limits, false).map((part) => part.text);
}

/** How far a chunk may go: full fences, fences without the language tag, or no fences at all. */
type FenceMode = 'full' | 'bare' | 'none';
const FENCE_MODES: readonly FenceMode[] = ['full', 'bare', 'none'];

function split(text: string, limits: MessageLimits, withFences: boolean): ChunkPart[] {
  const { maxLength, unit } = limits;
  if (!Number.isInteger(maxLength) || maxLength < minimumLimit(unit)) {
    throw new RangeError(`a message limit of ${maxLength} ${unit} cannot hold every character (minimum ${minimumLimit(unit)})`);
  }
  return fitsAsIs(text, limits) ?? layoutSplit(text, limits, withFences);
}

/**
 * Most replies fit in one message: then the chunk is the text without its
 * trailing whitespace, exactly what the full layout would cut, found without
 * splitting the text into graphemes. Undefined when the shortcut does not
 * apply (too long, leading whitespace, a code fence or a lone surrogate,
 * which the layout handles).
 */
function fitsAsIs(text: string, limits: MessageLimits): ChunkPart[] | undefined {
  // UTF-16 length bounds both code points and (from above) nothing else: measure only when needed.
  if (limits.unit !== 'bytes' && text.length > limits.maxLength * 2) return undefined;
  if (!/^\S/u.test(text) || text.includes('```') || text.includes('~~~') || LONE_SURROGATE.test(text)) return undefined;
  if (measure(text, limits.unit) > limits.maxLength) return undefined;
  const body = text.replace(/\s+$/u, '');
  return [{ text: body, start: 0, end: body.length, reopened: '', closed: '' }];
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The full layout: graphemes, cut priorities and fences (see the invariants above). */
export function layoutSplit(text: string, limits: MessageLimits, withFences: boolean): ChunkPart[] {
  const { maxLength, unit } = limits;
  const overhead = withFences ? largestFenceOverhead(text, limits) : 0;
  const atomCap = maxLength - overhead >= minimumLimit(unit) ? maxLength - overhead : maxLength;
  const layout = layoutText(text, unit, atomCap, withFences);
  const count = layout.atoms.length;

  const parts: ChunkPart[] = [];
  let start = nextStart(layout, 0);
  while (start < count) {
    let cut = -1;
    let mode: FenceMode = 'full';
    for (const candidate of FENCE_MODES) {
      // Inside a code block, the chunk's leading indentation goes before its fences do.
      if (candidate === 'none' && layout.fence[start] && firstContent(layout, start) !== start) break;
      cut = chooseCut(layout, start, limits, candidate);
      mode = candidate;
      if (cut >= 0) break;
    }
    if (cut < 0) {
      // Only leading indentation can make even the smallest chunk too big: drop it.
      const content = firstContent(layout, start);
      // Every atom fits on its own (atomCap), so a chunk starting at content always fits.
      if (content === start) throw new Error('splitMessage: no chunk fits at offset ' + layout.offsets[start]);
      start = content;
      continue;
    }
    const reopened = mode === 'none' ? '' : reopenLine(layout.fence[start], mode);
    const closed = mode === 'none' ? '' : closeLine(layout.fence[cut]);
    const bodyStart = layout.offsets[start]!;
    const bodyEnd = layout.offsets[layout.trimmedEnd[cut]!]!;
    parts.push({ text: reopened + text.slice(bodyStart, bodyEnd) + closed, start: bodyStart, end: bodyEnd, reopened, closed });
    start = nextStart(layout, cut);
  }
  return parts;
}

/**
 * The best boundary to end a chunk that starts at `start`, or -1 if not even one
 * atom fits. Sizes only grow as the cut moves right, so the scan stops at the first
 * body that is too big on its own.
 */
function chooseCut(layout: TextLayout, start: number, limits: MessageLimits, mode: FenceMode): number {
  const count = layout.atoms.length;
  const base = layout.sizeBefore[start]!;
  const reopenSize = mode === 'none' ? 0 : measure(reopenLine(layout.fence[start], mode), limits.unit);
  const lastByPriority = [-1, -1, -1, -1, -1];
  let lastAny = -1;
  let lastInsideDelimiter = -1;
  let lastOpensFence = -1;
  for (let cut = start + 1; cut <= count; cut++) {
    const bodyEnd = layout.trimmedEnd[cut]!;
    if (bodyEnd <= start) continue;
    const bodySize = layout.sizeBefore[bodyEnd]! - base;
    if (reopenSize + bodySize > limits.maxLength) break;
    const closeSize = mode === 'none' ? 0 : measure(closeLine(layout.fence[cut]), limits.unit);
    if (reopenSize + bodySize + closeSize > limits.maxLength) continue;
    if (cut === count) return cut;
    const priority = layout.priority[cut]!;
    if (priority === Cut.insideDelimiter) lastInsideDelimiter = cut;
    else if (priority === Cut.opensFence) lastOpensFence = cut;
    else {
      lastAny = cut;
      lastByPriority[priority] = cut;
    }
  }
  if (lastAny < 0) return lastInsideDelimiter >= 0 ? lastInsideDelimiter : lastOpensFence;
  const sizeAt = (cut: number): number => layout.sizeBefore[layout.trimmedEnd[cut]!]! - base;
  const fullest = sizeAt(lastAny);
  let best = -1;
  for (let priority: number = Cut.paragraph; priority > Cut.anywhere; priority--) {
    best = Math.max(best, lastByPriority[priority]!);
    if (best >= 0 && sizeAt(best) * 2 >= fullest) return best;
    // Inside code a broken line is worse than a short chunk.
    if (priority === Cut.line && best >= 0 && layout.fence[lastAny]) return best;
  }
  return lastAny;
}

/**
 * Where the chunk after a cut begins: past the line breaks and spaces at the cut,
 * but at the start of the line when the next content is indented (code keeps its
 * indentation).
 */
function nextStart(layout: TextLayout, cut: number): number {
  let index = cut;
  let afterLastBreak = -1;
  while (index < layout.atoms.length && layout.whitespace[index]) {
    if (layout.atoms[index]!.endsWith('\n')) afterLastBreak = index + 1;
    index++;
  }
  if (index >= layout.atoms.length) return layout.atoms.length;
  if (afterLastBreak >= 0) return afterLastBreak;
  return layout.lineStart[cut] ? cut : index;
}

function firstContent(layout: TextLayout, start: number): number {
  let index = start;
  while (index < layout.atoms.length && layout.whitespace[index]) index++;
  return index;
}

function reopenLine(fence: OpenFence | undefined, mode: FenceMode): string {
  if (!fence) return '';
  return (mode === 'full' && fence.info ? fence.marker + fence.info : fence.marker) + '\n';
}

function closeLine(fence: OpenFence | undefined): string {
  return fence ? '\n' + fence.marker : '';
}

/** The most a fence's close and reopen can add to one chunk, so no atom is made too big for it. */
function largestFenceOverhead(text: string, limits: MessageLimits): number {
  let largest = 0;
  for (const match of text.matchAll(/^ {0,3}(`{3,}|~{3,})(.*)$/gmu)) {
    const marker = match[1]!;
    const info = (match[2] ?? '').trim();
    largest = Math.max(largest, measure(`${marker}${info}\n\n${marker}`, limits.unit));
  }
  return largest;
}
