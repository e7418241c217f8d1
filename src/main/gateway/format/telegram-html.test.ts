import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTelegramHtml, type Entity } from '../../../../test/support/fake-telegram';
import { splitReply } from '../delivery/reply-parts';
import { markdownToPlainText } from './plain-text';
import { markdownToTelegramHtml } from './telegram-html';

/** What a Telegram user sees of the HTML (parsed by Telegram's rules, in the fake), with link targets and code languages put back in. */
function seen(html: string): { text: string; entities: readonly Entity[]; withHidden: string } {
  const parsed = parseTelegramHtml(html);
  if (!parsed.ok) throw new Error(`Telegram would refuse ${JSON.stringify(html)}: ${parsed.error}`);
  let withHidden = parsed.text;
  // Insert from the end, so earlier offsets stay valid.
  for (const entity of [...parsed.entities].sort((a, b) => b.offset - a.offset)) {
    if (entity.url) withHidden = withHidden.slice(0, entity.offset + entity.length) + entity.url + withHidden.slice(entity.offset + entity.length);
    if (entity.language) withHidden = withHidden.slice(0, entity.offset) + entity.language + withHidden.slice(entity.offset);
  }
  return { text: parsed.text, entities: parsed.entities, withHidden };
}

const wordsOf = (text: string) => text.replace(/[^\p{L}\p{N}]/gu, '');
const MARKUP = ['**', '*', '__', '_', '~~', '`', '```', '[', ']', '(', ')', '# ', '> ', '- ', '1. ', '\n', ' ', '<', '>', '&', '\\', '|', '\n|---|:-:|\n', '![', '!'];
const markdownish = fc
  .array(fc.oneof(fc.constantFrom(...MARKUP), fc.string({ maxLength: 6 }), fc.constantFrom('https://ex.org/a?b=1&c=2', 'javascript:alert(1)', '<b>', '&amp;', '```ts\n', '\n```\n')), { maxLength: 40 })
  .map((parts) => parts.join(''));

describe('Markdown → Telegram HTML', () => {
  it('renders bold, italic, strikethrough, code, code blocks, links, lists, headings and quotes as Telegram entities', () => {
    const html = markdownToTelegramHtml(
      ['# Title', 'Some **bold**, *italic*, _also_, ~~gone~~ and `a < b`.', '- one', '2. two', '> quoted', '```ts', 'if (a < b && c) {}', '```', 'See [docs](https://example.org/?a=1&b=2).'].join('\n'),
    );
    expect(html).toBe(
      [
        '<b>Title</b>',
        'Some <b>bold</b>, <i>italic</i>, <i>also</i>, <s>gone</s> and <code>a &lt; b</code>.',
        '• one',
        '2. two',
        '<blockquote>quoted</blockquote>',
        '<pre><code class="language-ts">if (a &lt; b &amp;&amp; c) {}</code></pre>',
        'See <a href="https://example.org/?a=1&amp;b=2">docs</a>.',
      ].join('\n'),
    );
    const { entities } = seen(html);
    expect(entities.map((entity) => entity.type)).toEqual(['bold', 'bold', 'italic', 'italic', 'strikethrough', 'code', 'blockquote', 'pre', 'text_link']);
  });

  it('shows an image as a link to it, its alt text the label, with no stray "!"', () => {
    expect(markdownToTelegramHtml('Look: ![a teapot](https://ex.org/pot.png) and ![](https://ex.org/cup.png)!')).toBe(
      'Look: <a href="https://ex.org/pot.png">a teapot</a> and <a href="https://ex.org/cup.png">https://ex.org/cup.png</a>!',
    );
  });

  it('shows a table as its columns lined up in a monospace block, markup dropped from the cells', () => {
    const table = ['| Tea | Steep |', '|:----|------:|', '| **green** | 2 min |', '| black | 4 min |'].join('\n');
    expect(markdownToTelegramHtml(`Times:\n${table}\nEnjoy.`)).toBe(
      ['Times:', '<pre>Tea   | Steep', '------|------', 'green | 2 min', 'black | 4 min</pre>', 'Enjoy.'].join('\n'),
    );
    // Too narrow a source to pad within its length: the cells only separated.
    expect(markdownToTelegramHtml('a|bb\n-|-\nccc|d')).toBe('<pre>a|bb\nccc|d</pre>');
  });

  it('shows HTML the agent wrote as text, and leaves snake_case, lone asterisks and unsafe links alone', () => {
    const source = '<script>alert(1)</script> a_b_c 2 * 3 * 4 [x](javascript:alert(1)) &amp; **open';
    const { text, entities } = seen(markdownToTelegramHtml(source));
    expect(text).toBe(source);
    expect(entities).toEqual([]);
  });

  it('property: the output is always HTML Telegram accepts, never longer to the reader than the Markdown, and loses no word', () => {
    fc.assert(
      fc.property(markdownish, (markdown) => {
        const { text, withHidden } = seen(markdownToTelegramHtml(markdown));
        expect([...text].length).toBeLessThanOrEqual([...markdown].length);
        expect(wordsOf(withHidden)).toBe(wordsOf(markdown));
      }),
      { numRuns: 2000 },
    );
  });

  it('property: text without Markdown markup comes out exactly as written, with no entity', () => {
    const plain = fc.string({ maxLength: 200, unit: 'grapheme' }).map((text) => text.replace(/[*_~`[\]\\#>\-+\d\r]/g, ''));
    fc.assert(
      fc.property(plain, (text) => {
        const { text: shown, entities } = seen(markdownToTelegramHtml(text));
        expect(entities).toEqual([]);
        expect(shown).toBe(text);
      }),
      { numRuns: 1000 },
    );
  });

  it('property: every tag in the output stands for Markdown the agent wrote (no markup characters, no tags)', () => {
    fc.assert(
      fc.property(markdownish, (markdown) => {
        const html = markdownToTelegramHtml(markdown);
        const tags = [...html.matchAll(/<([a-z]+)/g)].map((match) => match[1]);
        for (const tag of tags) expect(['b', 'i', 's', 'code', 'pre', 'a', 'blockquote']).toContain(tag);
        // Each `<` the agent wrote is still a visible `<`.
        expect(seen(html).text.split('<').length).toBeGreaterThanOrEqual(markdown.split('<').length - countInUrls(markdown, '<'));
      }),
      { numRuns: 1000 },
    );
  });

  it('property: a long reply split for Telegram renders chunk by chunk into valid HTML within 4096 code points, in order', () => {
    fc.assert(
      fc.property(fc.array(markdownish, { minLength: 50, maxLength: 200 }), (parts) => {
        const markdown = parts.join('\n');
        const chunks = splitReply(markdown, { maxLength: 4096, unit: 'code-points' });
        const shown = chunks.map((chunk) => seen(markdownToTelegramHtml(chunk)));
        for (const chunk of shown) expect([...chunk.text].length).toBeLessThanOrEqual(4096);
        expect(wordsOf(shown.map((chunk) => chunk.withHidden).join(''))).toBe(wordsOf(markdown));
      }),
      { numRuns: 100 },
    );
  });

  it('plain-text fallback keeps every word and drops only the markup', () => {
    expect(markdownToPlainText('**Hi** [there](https://x.org) `code`\n- item')).toBe('Hi there (https://x.org) code\n• item');
    fc.assert(
      fc.property(markdownish, (markdown) => {
        const plain = markdownToPlainText(markdown);
        expect([...plain].length).toBeLessThanOrEqual([...markdown].length);
        expect(wordsOf(plain)).toBe(wordsOf(markdown));
      }),
      { numRuns: 1000 },
    );
  });
});

function countInUrls(markdown: string, char: string): number {
  return [...markdown.matchAll(/\]\(([^)]*)\)/g)].reduce((sum, match) => sum + match[1]!.split(char).length - 1, 0);
}

describe('chunking Markdown for Telegram', () => {
  it('does not cut a long line inside a formatted span when a cut outside one fits', () => {
    const line = Array.from({ length: 300 }, (_, i) => `word${i} **bold phrase ${i} here** and \`code ${i}\` [link ${i}](https://x.org/${i})`).join(' ');
    const chunks = splitReply(line, { maxLength: 4096, unit: 'code-points' });
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) {
      const { text, entities } = seen(markdownToTelegramHtml(chunk));
      // No half entity: no delimiter left over as text, and every entity is whole.
      expect(text).not.toMatch(/\*\*|`|\]\(/);
      for (const entity of entities.filter((e) => e.type === 'bold')) expect(text.slice(entity.offset, entity.offset + entity.length)).toMatch(/^bold phrase \d+ here$/);
    }
  });
});
