import { describe, expect, it } from 'vitest';
import { markdownToMatrixHtml } from './matrix-html';

describe('Markdown → Matrix HTML (formatted_body)', () => {
  it('renders bold, italic, strikethrough, code, code blocks, links, headings, quotes and rules with the spec\'s safe tags', () => {
    const html = markdownToMatrixHtml(
      ['# Title', 'Some **bold**, *italic*, ~~gone~~ and `a < b`.', '- one', '> quoted', '```ts', 'if (a < b && c) {}', '```', 'See [docs](https://example.org/?a=1&b=2).', '---', 'end'].join('\n'),
    );
    expect(html).toBe(
      [
        '<h4>Title</h4>Some <strong>bold</strong>, <em>italic</em>, <del>gone</del> and <code>a &lt; b</code>.<br>• one',
        '<blockquote>quoted</blockquote>',
        '<pre><code class="language-ts">if (a &lt; b &amp;&amp; c) {}</code></pre>',
        'See <a href="https://example.org/?a=1&amp;b=2">docs</a>.<hr>end',
      ].join(''),
    );
  });

  it('renders a table as a table (Matrix has them), and an image as a link to it', () => {
    expect(markdownToMatrixHtml('| Tea | Steep |\n|---|---|\n| **green** | 2 min |')).toBe(
      '<table><thead><tr><th>Tea</th><th>Steep</th></tr></thead><tbody><tr><td><strong>green</strong></td><td>2 min</td></tr></tbody></table>',
    );
    expect(markdownToMatrixHtml('![a pot](https://ex.org/pot.png)')).toBe('<a href="https://ex.org/pot.png">a pot</a>');
  });

  it('shows HTML the agent wrote as text, and keeps unsafe links as text', () => {
    const html = markdownToMatrixHtml('<script>alert(1)</script> [x](javascript:alert(1)) "quoted" & more');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('href="javascript');
    expect(html).toContain('&lt;script&gt;');
    expect(html).toContain('&amp; more');
  });
});
