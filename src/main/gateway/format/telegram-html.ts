import { parseMarkdown, ruleLine, tableText, type Block, type Inline, type MarkdownDocument } from './markdown';
import { inlines as plainInlines } from './plain-text';

/**
 * Markdown → Telegram's HTML parse mode (a table as a `pre` block of lined-up columns). Only Telegram's own tags come out
 * (`b i s code pre a blockquote`), and only where the agent wrote the
 * matching Markdown; every other `<`, `>` and `&` is escaped, so text the
 * agent wrote is shown as text (a `<script>` in a reply is just characters).
 * The visible text is never longer than the Markdown it came from, so a chunk
 * that fits the limit as Markdown fits it as sent.
 */
export function markdownToTelegramHtml(markdown: string): string {
  return renderTelegramHtml(parseMarkdown(markdown));
}

export function renderTelegramHtml(document: MarkdownDocument): string {
  return document.map(block).join('\n');
}

function block(node: Block): string {
  switch (node.type) {
    case 'line':
      return escapeHtml(node.indent + node.marker) + inlines(node.children);
    case 'heading':
      return `<b>${inlines(node.children)}</b>`;
    case 'code-block': {
      // A one-word, plain language tag becomes Telegram's; any other info string stays visible as the first line.
      const tagged = /^[A-Za-z0-9_+#.-]{1,32}$/.test(node.info);
      const text = tagged || node.info === '' ? node.text : `${node.info}\n${node.text}`;
      // An empty block has nothing to format; its tag stays as text, so nothing the agent wrote is lost.
      if (text.trim() === '') return escapeHtml(node.info || text);
      const body = escapeHtml(text);
      return tagged ? `<pre><code class="language-${node.info}">${body}</code></pre>` : `<pre>${body}</pre>`;
    }
    case 'quote': {
      const inner = renderTelegramHtml(node.blocks);
      return inner.trim() === '' ? inner : `<blockquote>${inner}</blockquote>`;
    }
    case 'rule':
      return ruleLine(node.width);
    case 'table':
      // Telegram has no tables: the columns lined up in a monospace block.
      return `<pre>${escapeHtml(tableText(node, plainInlines))}</pre>`;
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
      return wrap('b', inlines(node.children));
    case 'italic':
      return wrap('i', inlines(node.children));
    case 'strike':
      return wrap('s', inlines(node.children));
    case 'link':
      return `<a href="${escapeAttribute(node.url)}">${inlines(node.children)}</a>`;
  }
}

function wrap(tag: string, inner: string): string {
  return inner === '' ? '' : `<${tag}>${inner}</${tag}>`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>]/g, (char) => (char === '&' ? '&amp;' : char === '<' ? '&lt;' : '&gt;'));
}

function escapeAttribute(text: string): string {
  return escapeHtml(text).replace(/"/g, '&quot;');
}
