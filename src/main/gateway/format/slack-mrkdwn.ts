import { parseMarkdown, ruleLine, tableText, type Block, type Inline, type MarkdownDocument } from './markdown';
import { inlines as plainInlines } from './plain-text';

/**
 * Markdown → Slack's `mrkdwn` (docs.slack.dev, "Formatting text for app
 * surfaces"): `*bold*`, `_italic_`, `~strike~`, `` `code` ``, ```` ``` ````
 * blocks, `>` quotes, `<url|label>` links; a heading is bold, a table its
 * columns lined up in a code block.
 *
 * Invariants (property-tested): every word of the Markdown is in the output;
 * `&`, `<` and `>` the agent wrote are always escaped (`&amp;`, `&lt;`,
 * `&gt;`), so the only `<…>` in the output are links this renderer wrote for
 * Markdown links to http(s) or mailto addresses — the agent's text can never
 * become `<!channel>`, `<!here>`, `<@U…>` or `<#C…>`; and `@channel`, `@here`,
 * `@everyone` get a full-width ＠ (the same length), in case a workspace links
 * names in text.
 */
export function markdownToSlackMrkdwn(markdown: string): string {
  return renderSlackMrkdwn(parseMarkdown(markdown));
}

export function renderSlackMrkdwn(document: MarkdownDocument): string {
  return document.map(block).join('\n');
}

function block(node: Block): string {
  switch (node.type) {
    case 'line':
      return text(node.indent + node.marker) + inlines(node.children);
    case 'heading':
      return wrap('*', inlines(node.children));
    case 'code-block': {
      // Slack shows no language: a language tag stays visible as the block's first line.
      const body = node.info === '' ? node.text : `${node.info}\n${node.text}`;
      return body.trim() === '' ? escapeSlack(body) : `\`\`\`\n${escapeSlack(body)}\n\`\`\``;
    }
    case 'quote':
      return renderSlackMrkdwn(node.blocks)
        .split('\n')
        .map((line) => `> ${line}`)
        .join('\n');
    case 'rule':
      return ruleLine(node.width);
    case 'table':
      return `\`\`\`\n${escapeSlack(tableText(node, plainInlines))}\n\`\`\``;
  }
}

function inlines(nodes: readonly Inline[]): string {
  return nodes.map(inline).join('');
}

function inline(node: Inline): string {
  switch (node.type) {
    case 'text':
      return text(node.text);
    case 'code':
      return node.text.trim() === '' ? escapeSlack(node.text) : `\`${escapeSlack(node.text).replace(/`/g, "'")}\``;
    case 'bold':
      return wrap('*', inlines(node.children));
    case 'italic':
      return wrap('_', inlines(node.children));
    case 'strike':
      return wrap('~', inlines(node.children));
    case 'link': {
      const label = inlines(node.children);
      // Only web and mail addresses become links; the label cannot hold `|` or `>` inside `<…>`.
      if (!/^(https?:\/\/|mailto:)[^\s<>|]+$/i.test(node.url)) return `${label} (${text(node.url)})`;
      const url = escapeSlack(node.url);
      return label.replace(/[*_~]/g, '') === url ? `<${url}>` : `<${url}|${label.replace(/\|/g, '/')}>`;
    }
  }
}

/**
 * A formatted span: the mark, the text, the mark again. An inner mark of the
 * same kind would end the span early, so it is dropped; an empty span is left
 * unmarked.
 */
function wrap(mark: string, inner: string): string {
  if (inner.trim() === '') return inner;
  return mark + inner.split(mark).join('') + mark;
}

/** The agent's plain text: escaped, and the words Slack could take for a ping defused. */
function text(raw: string): string {
  return escapeSlack(raw).replace(/@(channel|here|everyone)\b/gi, '\uFF20$1');
}

/** Escapes the three characters Slack treats as control characters. */
export function escapeSlack(raw: string): string {
  return raw.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
