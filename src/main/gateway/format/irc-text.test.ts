import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitReply } from '../delivery/reply-parts';
import { textBudget, toProtocolLines } from '../platforms/irc/lines';
import { IRC_BOLD, IRC_ITALIC, markdownToIrcText, stripIrcFormatting } from './irc-text';

const B = IRC_BOLD;
const I = IRC_ITALIC;
const wordsOf = (text: string) => text.replace(/[^\p{L}\p{N}]/gu, '');
const MARKUP = ['**', '*', '__', '_', '~~', '`', '```', '[', ']', '(', ')', '# ', '> ', '- ', '1. ', '\n', ' ', '<', '>', '&', '\\', '@', '#chan'];
const HOSTILE = ['\x02', '\x03', '\x034,5', '\x0F', '\x16', '\x1D', '\x1F', '\x01ACTION x\x01', '\0', '\r', '\x7F'];
const markdownish = fc
  .array(
    fc.oneof(
      fc.constantFrom(...MARKUP),
      fc.string({ maxLength: 6 }),
      fc.constantFrom(...HOSTILE),
      fc.constantFrom('https://ex.org/a?b=1&c=2', 'javascript:alert(1)', '```ts\n', '\n```\n', '<b>'),
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(''));

// eslint-disable-next-line no-control-regex -- control characters are what is counted
const controlsOf = (text: string) => text.match(/[\x00-\x08\x0A-\x1F\x7F]/g) ?? [];
// eslint-disable-next-line no-control-regex -- the agent's own control characters, dropped by the renderer
const withoutControls = (text: string) => text.replace(/[\x00-\x08\x0B-\x1F\x7F]/g, '');

describe('Markdown → IRC text', () => {
  it('renders bold and italic as IRC codes, lists and quotes as text, links as label and address, code blocks as their lines', () => {
    const text = markdownToIrcText(
      ['# Plan', 'Some **bold**, *italic*, ~~gone~~ and `a < b`.', '- one', '2. two', '> quoted', '```ts', 'if (a) {', '  b();', '}', '```', 'See [docs](https://example.org/?a=1).'].join('\n'),
    );
    expect(text).toBe(
      [
        `${B}Plan${B}`,
        `Some ${B}bold${B}, ${I}italic${I}, gone and a < b.`,
        '• one',
        '2. two',
        '> quoted',
        '[ts]',
        'if (a) {',
        '  b();',
        '}',
        'See docs (https://example.org/?a=1).',
      ].join('\n'),
    );
  });

  it('renders a table as lined-up columns without markup, and an image as its alt text and address', () => {
    expect(markdownToIrcText('| Tea | Steep |\n|---|---|\n| **green** | 2 min |')).toBe(['Tea   | Steep', '------|------', 'green | 2 min'].join('\n'));
    expect(markdownToIrcText('![a pot](https://ex.org/pot.png)')).toBe('a pot (https://ex.org/pot.png)');
  });

  it('drops colour codes, CTCP markers and other control characters the agent wrote', () => {
    expect(markdownToIrcText('\x034,5red\x03 \x01ACTION waves\x01 \x02loud\x02 a\0b')).toBe('4,5red ACTION waves loud ab');
  });

  it('property: every word survives, and the only control characters are balanced bold and italic codes on each line', () => {
    fc.assert(
      fc.property(markdownish, (markdown) => {
        const text = markdownToIrcText(markdown);
        expect(wordsOf(stripIrcFormatting(text))).toBe(wordsOf(withoutControls(markdown).replace(/\r/g, '')));
        for (const line of text.split('\n')) {
          for (const char of controlsOf(line)) expect([B, I]).toContain(char);
          expect(line.split(B).length % 2).toBe(1);
          expect(line.split(I).length % 2).toBe(1);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('property: formatting appears only where the agent wrote Markdown for it', () => {
    const plain = fc.string({ maxLength: 200, unit: 'grapheme' }).map((text) => withoutControls(text).replace(/[*_~`[\]\\#>\-+\d\r\n]/g, ''));
    fc.assert(
      fc.property(plain, (text) => {
        expect(markdownToIrcText(text)).toBe(text);
      }),
      { numRuns: 1000 },
    );
  });

  it('property: a long reply, chunked and cut into protocol lines, keeps every word and leaves no line over the budget or with a raw control', () => {
    const budget = textBudget('homing', '#homing');
    fc.assert(
      fc.property(fc.array(markdownish, { minLength: 20, maxLength: 120 }), (parts) => {
        const markdown = parts.join('\n');
        const lines = splitReply(markdown, { maxLength: 4000, unit: 'bytes' }).flatMap((chunk) => toProtocolLines(markdownToIrcText(chunk), budget));
        for (const line of lines) {
          expect(Buffer.byteLength(line)).toBeLessThanOrEqual(budget);
          for (const char of controlsOf(line)) expect([B, I]).toContain(char);
        }
        expect(wordsOf(stripIrcFormatting(lines.join('')))).toBe(wordsOf(withoutControls(markdown).replace(/\r/g, '')));
      }),
      { numRuns: 100 },
    );
  });
});
