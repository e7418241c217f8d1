import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { markdownToSlackMrkdwn } from './slack-mrkdwn';

const wordsOf = (text: string) => text.replace(/[^\p{L}\p{N}]/gu, '');
const MARKUP = ['**', '*', '__', '_', '~~', '`', '```', '[', ']', '(', ')', '# ', '> ', '- ', '1. ', '\n', ' ', '<', '>', '&', '|', '@', '!'];
const markdownish = fc
  .array(
    fc.oneof(
      fc.constantFrom(...MARKUP),
      fc.string({ maxLength: 6 }),
      fc.constantFrom('<!channel>', '<!here>', '<@U0123ABCD>', '<#C0123|general>', '@channel', '@here', '&amp;', '&lt;!channel&gt;'),
      fc.constantFrom('https://ex.org/a?b=1&c=2', 'javascript:alert(1)', '```ts\n', '\n```\n', '[x](https://ex.org/<!here>)'),
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(''));

describe('Markdown → Slack mrkdwn', () => {
  it('renders bold, italic, strike, code, quotes, lists, links and headings in mrkdwn', () => {
    const text = markdownToSlackMrkdwn(
      ['# Plan', 'Some **bold**, *italic*, ~~gone~~ and `a < b`.', '- one', '> quoted', '```ts', 'if (a && b) {}', '```', 'See [the docs](https://example.org/?a=1&b=2).'].join('\n'),
    );
    expect(text).toBe(
      [
        '*Plan*',
        'Some *bold*, _italic_, ~gone~ and `a &lt; b`.',
        '• one',
        '> quoted',
        '```',
        'ts',
        'if (a &amp;&amp; b) {}',
        '```',
        'See <https://example.org/?a=1&amp;b=2|the docs>.',
      ].join('\n'),
    );
  });

  it('escapes whatever could notify or mention, and never links an address that is not the web or mail', () => {
    expect(markdownToSlackMrkdwn('<!channel> <!here> <@U0123ABCD> & @channel @here @everyone')).toBe('&lt;!channel&gt; &lt;!here&gt; &lt;@U0123ABCD&gt; &amp; \uFF20channel \uFF20here \uFF20everyone');
    expect(markdownToSlackMrkdwn('[click](javascript:alert(1))')).not.toContain('<javascript');
  });

  it('renders a table as lined-up columns in a code block', () => {
    expect(markdownToSlackMrkdwn('| Tea | Steep |\n|---|---|\n| **green** | 2 min |')).toBe(['```', 'Tea   | Steep', '------|------', 'green | 2 min', '```'].join('\n'));
  });

  it('property: every word survives, and the only control sequences are links it wrote', () => {
    fc.assert(
      fc.property(markdownish, (markdown) => {
        const out = markdownToSlackMrkdwn(markdown);
        // What is left once the links and the quotes' `> ` this renderer wrote are taken out holds no bare `<` or `>`.
        const unescaped = out.replace(/<(https?:\/\/|mailto:)[^<>]*>/gi, '').replace(/^(?:> )+/gm, '').replace(/&lt;|&gt;|&amp;/g, '');
        expect(unescaped).not.toMatch(/[<>]/);
        expect(out).not.toMatch(/<[!@#]/);
        // Slack shows the escapes as the characters: every word of the Markdown is there, in order.
        const words = wordsOf(markdown);
        let rest = wordsOf(out.replace(/&(amp|lt|gt);/g, (_all, name: string) => ({ amp: '&', lt: '<', gt: '>' })[name]!));
        for (const char of words) {
          const at = rest.indexOf(char);
          expect(at, `"${char}" of ${JSON.stringify(markdown)} in ${JSON.stringify(out)}`).toBeGreaterThanOrEqual(0);
          rest = rest.slice(at + 1);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
