import { parseMarkdown, ruleLine, tableText, type Block, type Inline, type MarkdownDocument } from './markdown';

/**
 * Markdown → plain text: the markup is dropped, the words stay, a link keeps
 * its address (`label (https://…)`). For a platform without markup, and for
 * Telegram's fallback when it refuses a chunk's HTML.
 */
export function markdownToPlainText(markdown: string): string {
  return renderPlainText(parseMarkdown(markdown));
}

export function renderPlainText(document: MarkdownDocument): string {
  return document.map(block).join('\n');
}

function block(node: Block): string {
  switch (node.type) {
    case 'line':
      return node.indent + node.marker + inlines(node.children);
    case 'heading':
      return inlines(node.children);
    case 'code-block':
      return node.info === '' ? node.text : `${node.info}\n${node.text}`;
    case 'quote':
      return renderPlainText(node.blocks)
        .split('\n')
        .map((line) => `▍${line}`)
        .join('\n');
    case 'rule':
      return ruleLine(node.width);
    case 'table':
      return tableText(node, inlines);
  }
}

/** Inline Markdown as plain text (also a table cell's text on platforms that show tables as text). */
export function inlines(nodes: readonly Inline[]): string {
  return nodes.map(inline).join('');
}

function inline(node: Inline): string {
  switch (node.type) {
    case 'text':
    case 'code':
      return node.text;
    case 'bold':
    case 'italic':
    case 'strike':
      return inlines(node.children);
    case 'link': {
      const label = inlines(node.children);
      return label === node.url ? label : `${label} (${node.url})`;
    }
  }
}
