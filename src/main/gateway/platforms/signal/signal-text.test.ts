import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { markdownToSignal, signalBody } from './signal-text';

/** The text each style covers, to read the ranges as a person would. */
function covered(markdown: string): [string, string][] {
  const { text, textStyle } = markdownToSignal(markdown);
  return textStyle.map((range) => {
    const [start, length, style] = range.split(':');
    return [style!, text.slice(Number(start), Number(start) + Number(length))];
  });
}

describe('Markdown as Signal text styles', () => {
  it('turns bold, italic, strikethrough and code into ranges over the plain words', () => {
    const result = markdownToSignal('Say **hello** to _her_, ~~not~~ `him`');
    expect(result.text).toBe('Say hello to her, not him');
    expect(covered('Say **hello** to _her_, ~~not~~ `him`')).toEqual([
      ['BOLD', 'hello'],
      ['ITALIC', 'her'],
      ['STRIKETHROUGH', 'not'],
      ['MONOSPACE', 'him'],
    ]);
  });

  it('counts ranges in UTF-16 units, as Signal does, after emoji and other astral characters', () => {
    const result = markdownToSignal('😀😀 **bold**');
    expect(result.textStyle).toEqual(['5:4:BOLD']);
    expect(result.text.slice(5, 9)).toBe('bold');
  });

  it('makes a heading bold, a code block monospace with its language as a line, and keeps a link’s address', () => {
    expect(covered('# Title\n```ts\nconst a = 1;\n```')).toEqual([
      ['BOLD', 'Title'],
      ['MONOSPACE', 'const a = 1;'],
    ]);
    expect(markdownToSignal('see [docs](https://example.org)').text).toBe('see docs (https://example.org)');
  });

  it('keeps styles on their words inside a quote, whose lines keep their "> "', () => {
    const result = markdownToSignal('> one **two**\n> three `four`');
    expect(result.text).toBe('> one two\n> three four');
    expect(covered('> one **two**\n> three `four`')).toEqual([
      ['BOLD', 'two'],
      ['MONOSPACE', 'four'],
    ]);
  });

  it('is never longer in UTF-8 bytes than the Markdown it came from', () => {
    for (const markdown of ['> quoted\n> lines\n> **all**', '| a | b |\n| - | - |\n| 1 | 2 |', '- a\n- b\n* c\n  + d', '# Héading\n- item ✓\n1. first', '```\ncode\n```', '[x](https://example.org)']) {
      expect(Buffer.byteLength(markdownToSignal(markdown).text), markdown).toBeLessThanOrEqual(Buffer.byteLength(markdown));
    }
  });

  it('leaves text without markup alone, with no ranges, and writes no style the agent did not write', () => {
    expect(markdownToSignal('just words * and _ alone')).toEqual({ text: 'just words * and _ alone', textStyle: [] });
  });

  it('for any Markdown: as sent no longer in bytes than its source, every range inside the text on a non-blank span, no word lost', () => {
    const MARKUP = ['**', '*', '__', '_', '~~', '`', '```', '[', ']', '(', ')', '# ', '> ', '- ', '* ', '1. ', '\n', ' ', '| a | b |\n| - | - |\n', 'é', '😀', '✓'];
    const markdownish = fc
      .array(fc.oneof(fc.constantFrom(...MARKUP), fc.string({ maxLength: 6 }), fc.constantFrom('https://ex.org/a?b=1', '```ts\n', '\n```\n')), { maxLength: 40 })
      .map((parts) => parts.join(''));
    const wordsOf = (text: string) => text.replace(/[^\p{L}\p{N}]/gu, '');
    fc.assert(
      fc.property(markdownish, (markdown) => {
        const { text, textStyle } = markdownToSignal(markdown);
        // Longer only by the space a quote line written ">x" gains.
        const tightQuotes = markdown.split('\n').filter((line) => /^ {0,3}>[^ \n]/.test(line)).length;
        expect(Buffer.byteLength(text)).toBeLessThanOrEqual(Buffer.byteLength(markdown) + tightQuotes);
        expect(Buffer.byteLength(signalBody(markdown, Buffer.byteLength(markdown)).text)).toBeLessThanOrEqual(Buffer.byteLength(markdown));
        for (const range of textStyle) {
          const [start, length, style] = range.split(':');
          expect(['BOLD', 'ITALIC', 'STRIKETHROUGH', 'MONOSPACE']).toContain(style);
          expect(Number(length)).toBeGreaterThan(0);
          expect(Number(start) + Number(length)).toBeLessThanOrEqual(text.length);
          expect(text.slice(Number(start), Number(start) + Number(length)).trim()).not.toBe('');
        }
        // Every letter and digit of the source is in the text, in order (markup characters aside).
        expect(wordsOf(text)).toBe(wordsOf(markdown));
      }),
      { numRuns: 500 },
    );
  });
});
