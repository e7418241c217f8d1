import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { Markdown, safeHref } from './markdown';

const html = (text: string) => renderToStaticMarkup(createElement(Markdown, { text }));

describe('the transcript’s Markdown', () => {
  it('keeps HTML in a reply as text: <script> never becomes an element', () => {
    const out = html('<script>alert(1)</script> and <img src=x onerror=alert(2)>');
    expect(out).not.toContain('<script');
    expect(out).not.toContain('<img');
    expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('renders code blocks, inline code, bold, italics and lists', () => {
    const out = html('Here:\n\n```js\nconst a = "<b>";\n```\n\nUse `npm test`, **really** and *now*.\n\n- one\n- two\n\n1. first');
    expect(out).toContain('<pre class="code-block" data-lang="js"><code>const a = &quot;&lt;b&gt;&quot;;</code></pre>');
    expect(out).toContain('<code>npm test</code>');
    expect(out).toContain('<strong>really</strong>');
    expect(out).toContain('<em>now</em>');
    expect(out).toContain('<ul><li>one</li><li>two</li></ul>');
    expect(out).toContain('<ol><li>first</li></ol>');
  });

  it('links only to web pages and mail, and opens them outside the window', () => {
    expect(html('[docs](https://example.org/a)')).toContain('<a href="https://example.org/a" target="_blank" rel="noopener noreferrer">docs</a>');
    expect(html('[x](javascript:alert(1))')).not.toContain('<a');
    expect(safeHref('data:text/html,hi')).toBeNull();
    expect(safeHref('file:///etc/passwd')).toBeNull();
  });

  it('shows an unclosed code fence (a reply still streaming) as code to the end', () => {
    expect(html('```\nline 1\nline 2')).toContain('<code>line 1\nline 2</code>');
  });
});
