import { parseMarkdown, ruleLine, tableText, type Block, type Inline, type MarkdownDocument } from './markdown';
import { inlines as plainInlines } from './plain-text';

/**
 * Markdown → IRC text. IRC has no markup, only mIRC formatting codes, which
 * most clients show: bold (`\x02`) and italic (`\x1D`) become those codes,
 * each closed on the line it opened; strikethrough and inline code stay plain
 * text; a link is its label and its address (`docs (https://…)`); a code block
 * is its lines as written, without fences (its language, when given, as a
 * first line `[ts]`), so it reads the same in every client; a heading is bold.
 *
 * Invariants (property-tested): every word of the Markdown is in the output;
 * the only control characters in it are the bold and italic codes this
 * renderer wrote for Markdown the agent wrote, balanced on every line — any
 * control character in the agent's text (a colour, a CTCP marker, NUL, a bare
 * CR) is dropped, so a reply cannot format or hijack the line on its own.
 */

export const IRC_BOLD = '\x02';
export const IRC_ITALIC = '\x1D';

export function markdownToIrcText(markdown: string): string {
  return renderIrcText(parseMarkdown(markdown));
}

export function renderIrcText(document: MarkdownDocument): string {
  return document.map(block).join('\n');
}

function block(node: Block): string {
  switch (node.type) {
    case 'line':
      return clean(node.indent + node.marker) + inlines(node.children);
    case 'heading':
      return wrap(IRC_BOLD, inlines(node.children));
    case 'code-block': {
      const body = node.text.split('\n').map(clean).join('\n');
      return node.info === '' ? body : `[${clean(node.info)}]\n${body}`;
    }
    case 'quote':
      return renderIrcText(node.blocks)
        .split('\n')
        .map((line) => `> ${line}`)
        .join('\n');
    case 'rule':
      return ruleLine(node.width);
    case 'table':
      return tableText(node, (cell) => clean(plainInlines(cell)));
  }
}

function inlines(nodes: readonly Inline[]): string {
  return nodes.map(inline).join('');
}

function inline(node: Inline): string {
  switch (node.type) {
    case 'text':
    case 'code':
      return clean(node.text);
    case 'bold':
      return wrap(IRC_BOLD, inlines(node.children));
    case 'italic':
      return wrap(IRC_ITALIC, inlines(node.children));
    case 'strike':
      return inlines(node.children);
    case 'link': {
      const label = inlines(node.children);
      const url = clean(node.url);
      return stripIrcFormatting(label) === url ? label : `${label} (${url})`;
    }
  }
}

/**
 * A formatted span: the code, the text, the code again. Nested spans of the
 * same kind would toggle the code off inside, so an inner code of the same
 * kind is dropped (`**a *b* c**` is bold, with b bold and italic).
 */
function wrap(code: string, inner: string): string {
  if (stripIrcFormatting(inner).trim() === '') return inner;
  return code + inner.split(code).join('') + code;
}

// eslint-disable-next-line no-control-regex -- the C0 controls (but tab) and DEL are what is removed
const CONTROLS = /[\x00-\x08\x0A-\x1F\x7F]/g;

/** The agent's text without control characters: only this renderer writes formatting codes. */
function clean(text: string): string {
  return text.replace(CONTROLS, '');
}

/** The text without IRC formatting codes (what a client shows). */
export function stripIrcFormatting(text: string): string {
  // eslint-disable-next-line no-control-regex -- the formatting codes are the point
  return text.replace(/[\x02\x1D\x0F\x16\x1E\x1F\x11]|\x03(?:\d{1,2}(?:,\d{1,2})?)?/g, '');
}
