import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LengthUnit, MessageLimits } from './adapter';
import { layoutSplit, splitMessage, splitMessageParts, splitPlainText, type ChunkPart } from './chunking';
import { graphemes, measure } from './text-measure';

const bytes = (maxLength: number): MessageLimits => ({ maxLength, unit: 'bytes' });
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Fences are balanced when every ``` line that opens a block has one that closes it (CommonMark rules, written again here). */
function fencesBalanced(chunk: string): boolean {
  let open: string | undefined;
  for (const line of chunk.split('\n')) {
    const run = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    // CommonMark: a backtick in a backtick fence's info string makes it inline code.
    if (!run || (open === undefined && run[1]![0] === '`' && run[2]!.includes('`'))) continue;
    if (open === undefined) open = run[1];
    else if (run[1]![0] === open[0] && run[1]!.length >= open.length && run[2]!.trim() === '') open = undefined;
  }
  return open === undefined;
}

/** The chunker's documented precondition: a fence line longer than half a chunk is cut like text. */
function fenceLinesFit(text: string, limits: MessageLimits): boolean {
  return text.split('\n').every((line) => !/^ {0,3}(`{3}|~{3})/.test(line) || measure(line, limits.unit) * 2 <= limits.maxLength);
}

function graphemeBoundaries(text: string): Set<number> {
  const set = new Set<number>([0]);
  let offset = 0;
  for (const cluster of graphemes(text)) set.add((offset += cluster.length));
  return set;
}

/** Every invariant the chunker promises, for one text and one limit. */
function checkParts(text: string, limits: MessageLimits, parts: ChunkPart[]): void {
  let previousEnd = 0;
  for (const part of parts) {
    expect(measure(part.text, limits.unit)).toBeLessThanOrEqual(limits.maxLength);
    expect(part.text.trim()).not.toBe('');
    expect(part.text).not.toMatch(LONE_SURROGATE);
    expect(fencesBalanced(part.text)).toBe(true);
    expect(part.text).toBe(part.reopened + text.slice(part.start, part.end) + part.closed);
    expect(part.start).toBeGreaterThanOrEqual(previousEnd);
    expect(text.slice(previousEnd, part.start).trim()).toBe('');
    previousEnd = part.end;
  }
  expect(text.slice(previousEnd).trim()).toBe('');
}

describe('splitMessage', () => {
  it('returns a short message unchanged, and nothing for an empty or blank one', () => {
    expect(splitMessage('hello there', bytes(100))).toEqual(['hello there']);
    expect(splitMessage('', bytes(100))).toEqual([]);
    expect(splitMessage(' \n\n  \n', bytes(100))).toEqual([]);
  });

  it('cuts at a paragraph break before a line break, and at a line break before a space', () => {
    const text = 'first paragraph line one\nline two\n\nsecond paragraph is here';
    expect(splitMessage(text, bytes(40))).toEqual(['first paragraph line one\nline two', 'second paragraph is here']);
    expect(splitMessage('aaaa bbbb\ncccc dddd eeee', bytes(16))).toEqual(['aaaa bbbb', 'cccc dddd eeee']);
  });

  it('cuts after a sentence before an arbitrary space', () => {
    expect(splitMessage('One two three. Four five six seven', bytes(24))).toEqual(['One two three.', 'Four five six seven']);
  });

  it('takes a worse boundary when the better one would leave the chunk less than half full', () => {
    const [first] = splitMessage('ab\n\n' + 'word '.repeat(20), bytes(40));
    expect(first!.length).toBeGreaterThan(20);
  });

  it('counts in the platform unit: bytes, UTF-16 units or code points', () => {
    const text = 'é'.repeat(10); // 10 code points, 10 UTF-16 units, 20 bytes
    expect(splitMessage(text, { maxLength: 10, unit: 'code-points' })).toEqual([text]);
    expect(splitMessage(text, { maxLength: 10, unit: 'utf16' })).toEqual([text]);
    expect(splitMessage(text, { maxLength: 10, unit: 'bytes' })).toEqual(['é'.repeat(5), 'é'.repeat(5)]);
  });

  it('never splits a surrogate pair or a UTF-8 sequence, even with no spaces', () => {
    const text = '😀'.repeat(7);
    for (const chunk of splitMessage(text, { maxLength: 3, unit: 'utf16' })) expect(chunk).toBe('😀');
    for (const chunk of splitMessage(text, { maxLength: 6, unit: 'bytes' })) expect(chunk).toBe('😀');
  });

  it('keeps a grapheme cluster whole when it fits in a chunk', () => {
    const family = '👨‍👩‍👧'; // 5 code points, 18 bytes
    const chunks = splitMessage(`${family}${family}${family}`, bytes(40));
    expect(chunks).toEqual([family + family, family]);
  });

  it('splits a cluster bigger than a whole chunk between its code points', () => {
    const zalgo = 'a' + '\u0301'.repeat(30); // one cluster of 61 bytes
    const chunks = splitMessage(zalgo, bytes(20));
    expect(chunks.join('')).toBe(zalgo);
    for (const chunk of chunks) expect(measure(chunk, 'bytes')).toBeLessThanOrEqual(20);
  });

  it('closes a split code fence and reopens it with its language, within the limit', () => {
    const code = Array.from({ length: 8 }, (_, i) => `const value${i} = ${i};`).join('\n');
    const text = `Here is code:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nDone.`;
    const parts = splitMessageParts(text, bytes(80));
    checkParts(text, bytes(80), parts);
    const inside = parts.filter((part) => part.text.includes('const value'));
    expect(inside.length).toBeGreaterThan(1);
    for (const part of inside.slice(1)) expect(part.text.startsWith('```ts\n')).toBe(true);
    for (const part of inside.slice(0, -1)) expect(part.text.endsWith('\n```')).toBe(true);
  });

  it('reopens longer backtick and tilde fences with the same marker', () => {
    const text = '````md\n' + 'line of text\n'.repeat(6) + '````\n~~~\n' + 'more text\n'.repeat(6) + '~~~';
    const chunks = splitMessage(text, bytes(50));
    expect(chunks.some((chunk) => chunk.startsWith('````md\nline'))).toBe(true);
    expect(chunks.some((chunk) => chunk.startsWith('~~~\nmore'))).toBe(true);
    for (const chunk of chunks) expect(fencesBalanced(chunk)).toBe(true);
  });

  it('closes a fence the text never closed', () => {
    expect(splitMessage('```py\nprint(1)', bytes(100))).toEqual(['```py\nprint(1)\n```']);
  });

  it('cuts code between lines, keeping the indentation of the line that starts a chunk', () => {
    const text = '```\nif (x) {\n    deeplyIndented();\n    another();\n}\n```';
    expect(splitMessage(text, bytes(36))).toEqual([
      '```\nif (x) {\n```',
      '```\n    deeplyIndented();\n```',
      '```\n    another();\n}\n```',
    ]);
  });

  it('never starts a chunk with a fence-like run the text did not have as a fence, even where every other cut is poor', () => {
    // Every cut up to the limit is inside an inline code span or right before ```: the span is cut, not the fence.
    const text = 'a ```not-a-fence `inline` ```not-a-fence a \n\na ';
    const parts = splitMessageParts(text, { maxLength: 25, unit: 'code-points' });
    checkParts(text, { maxLength: 25, unit: 'code-points' }, parts);
    expect(parts.map((part) => part.text)).toEqual(['a ```not-a-fence `inline', '` ```not-a-fence a \n\na']);
  });

  it('drops a code line’s indentation before it would send the line outside its fence', () => {
    // Reopened, indented and closed, the last line does not fit: without its indentation it does.
    const text = '```\na \n    👨‍👩‍👧 \n```';
    const parts = splitMessageParts(text, bytes(27));
    checkParts(text, bytes(27), parts);
    expect(parts.map((part) => part.text)).toEqual(['```\na\n```', '```\n👨‍👩‍👧 \n```']);
  });

  it('rejects a limit too small for a single character', () => {
    expect(() => splitMessage('x', bytes(3))).toThrow(RangeError);
    expect(() => splitMessage('x', { maxLength: 1, unit: 'utf16' })).toThrow(RangeError);
  });
});

describe('splitPlainText', () => {
  it('treats fence lines as plain characters', () => {
    expect(splitPlainText('```ts code here', bytes(8))).toEqual(['```ts', 'code', 'here']);
  });
});

// ---- properties ----

const UNITS: readonly LengthUnit[] = ['code-points', 'utf16', 'bytes'];
const word = fc.constantFrom(
  'a', 'hello', 'world.', 'Done!', 'why?', 'x1', 'ünïcödé', 'naïve', '日本語', '文章。', '👍', '👨‍👩‍👧', 'e\u0301', '🇫🇷',
  'supercalifragilisticexpialidocious', '"quoted."', '`inline`', '```not-a-fence',
);
const separator = fc.constantFrom(' ', ' ', ' ', '  ', '\n', '\n\n', '\n\n\n', ' \n', '\t');
const prose = fc
  .array(fc.tuple(word, separator), { minLength: 1, maxLength: 40 })
  .map((pairs) => pairs.map(([w, s]) => w + s).join(''));
const fenceBlock = fc
  .tuple(fc.constantFrom('', 'ts', 'python', 'sh'), fc.array(fc.tuple(fc.constantFrom('', '  ', '    '), prose), { maxLength: 6 }))
  .map(([lang, lines]) => '```' + lang + '\n' + lines.map(([indent, line]) => indent + line.replace(/\n+/g, ' ')).join('\n') + '\n```');
const markdown = fc
  .array(fc.oneof(prose, prose, fenceBlock), { minLength: 1, maxLength: 6 })
  .map((blocks) => blocks.join('\n\n'));

describe('splitMessage properties', () => {
  it('every chunk fits, has balanced fences, and the bodies rebuild the text (all units)', () => {
    fc.assert(
      fc.property(markdown, fc.constantFrom(...UNITS), fc.integer({ min: 24, max: 300 }), (text, unit, maxLength) => {
        const limits = { maxLength, unit };
        fc.pre(fenceLinesFit(text, limits));
        checkParts(text, limits, splitMessageParts(text, limits));
      }),
      { numRuns: 300 },
    );
  });

  it('cuts only between grapheme clusters when every cluster fits a chunk', () => {
    fc.assert(
      fc.property(markdown, fc.constantFrom(...UNITS), fc.integer({ min: 64, max: 300 }), (text, unit, maxLength) => {
        fc.pre(fenceLinesFit(text, { maxLength, unit }));
        const boundaries = graphemeBoundaries(text);
        for (const part of splitMessageParts(text, { maxLength, unit })) {
          expect(boundaries.has(part.start)).toBe(true);
          expect(boundaries.has(part.end)).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('cuts a reply that fits in one message exactly as the full layout does, without the layout', () => {
    const anyText = fc.oneof(markdown, fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 100 }));
    fc.assert(
      fc.property(anyText, fc.constantFrom(...UNITS), fc.integer({ min: 4, max: 400 }), fc.boolean(), (text, unit, maxLength, withFences) => {
        const limits = { maxLength, unit };
        const expected = layoutSplit(text, limits, withFences).map((part) => part.text);
        expect(withFences ? splitMessage(text, limits) : splitPlainText(text, limits)).toEqual(expected);
      }),
      { numRuns: 1_000 },
    );
  });

  it('holds for arbitrary Unicode, including tiny limits', () => {
    const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 100 }));
    fc.assert(
      fc.property(anyText, fc.constantFrom(...UNITS), fc.integer({ min: 4, max: 60 }), (text, unit, maxLength) => {
        let previousEnd = 0;
        for (const part of splitMessageParts(text, { maxLength, unit })) {
          expect(measure(part.text, unit)).toBeLessThanOrEqual(maxLength);
          expect(part.text.trim()).not.toBe('');
          expect(part.text).not.toMatch(LONE_SURROGATE);
          expect(part.text).toBe(part.reopened + text.slice(part.start, part.end) + part.closed);
          expect(text.slice(previousEnd, part.start).trim()).toBe('');
          previousEnd = part.end;
        }
        expect(text.slice(previousEnd).trim()).toBe('');
      }),
      { numRuns: 300 },
    );
  });
});
