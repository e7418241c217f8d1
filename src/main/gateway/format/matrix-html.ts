import { parseMarkdown, type Block, type Inline, type MarkdownDocument } from './markdown';
import { escapeHtml } from './telegram-html';

/**
 * Markdown → a Matrix `formatted_body` (`format: "org.matrix.custom.html"`).
 * Only tags from the spec's recommended safe list come out (`strong em del
 * code pre a blockquote h4 hr br table thead tbody tr th td`), and only where the agent wrote the matching
 * Markdown; every other `<`, `>`, `&` and `"` is escaped, so text the agent
 * wrote is shown as text. Links keep only http(s)/mailto addresses (the
 * Markdown parser's rule). The plain `body` beside it is plain-text.ts's.
 */
export function markdownToMatrixHtml(markdown: string): string {
  return renderMatrixHtml(parseMarkdown(markdown));
}

export function renderMatrixHtml(document: MarkdownDocument): string {
  let html = '';
  let previousIsBlock = true;
  for (const node of document) {
    const rendered = block(node);
    const isBlock = node.type !== 'line';
    // Block elements end a line by themselves; two lines of text need a <br> between them.
    if (html !== '' && !isBlock && !previousIsBlock) html += '<br>';
    html += rendered;
    previousIsBlock = isBlock;
  }
  return html;
}

function block(node: Block): string {
  switch (node.type) {
    case 'line':
      return escapeHtml(node.indent + node.marker) + inlines(node.children);
    case 'heading':
      return `<h4>${inlines(node.children)}</h4>`;
    case 'code-block': {
      const tagged = /^[A-Za-z0-9_+#.-]{1,32}$/.test(node.info);
      const text = tagged || node.info === '' ? node.text : `${node.info}\n${node.text}`;
      const body = escapeHtml(text);
      return tagged ? `<pre><code class="language-${node.info}">${body}</code></pre>` : `<pre><code>${body}</code></pre>`;
    }
    case 'quote':
      return `<blockquote>${renderMatrixHtml(node.blocks)}</blockquote>`;
    case 'rule':
      return '<hr>';
    case 'table': {
      const [head, ...body] = node.rows;
      const row = (cells: readonly (readonly Inline[])[], tag: 'th' | 'td') => `<tr>${cells.map((cell) => `<${tag}>${inlines(cell)}</${tag}>`).join('')}</tr>`;
      return `<table><thead>${row(head!, 'th')}</thead><tbody>${body.map((cells) => row(cells, 'td')).join('')}</tbody></table>`;
    }
  }
}

function inlines(nodes: readonly Inline[]): string {
  return nodes.map(inline).join('');
}

function inline(node: Inline): string {
  switch (node.type) {
    case 'text':
      return escapeHtml(node.text);
    case 'code':
      return `<code>${escapeHtml(node.text)}</code>`;
    case 'bold':
      return wrap('strong', inlines(node.children));
    case 'italic':
      return wrap('em', inlines(node.children));
    case 'strike':
      return wrap('del', inlines(node.children));
    case 'link':
      return `<a href="${escapeHtml(node.url).replace(/"/g, '&quot;')}">${inlines(node.children)}</a>`;
  }
}

function wrap(tag: string, inner: string): string {
  return inner === '' ? '' : `<${tag}>${inner}</${tag}>`;
}
