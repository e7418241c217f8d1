import { parseMarkdown, ruleLine, tableText, type Block, type Inline } from '../../format/markdown';
import { inlines as plainInlines } from '../../format/plain-text';

/**
 * The agent's Markdown as Signal text and its styles: signal-cli's `send`
 * takes the text and `textStyle` ranges "start:length:STYLE" (man signal-cli(1),
 * send `--text-style`; SendCommand.parseTextStyles), STYLE one of BOLD,
 * ITALIC, SPOILER, STRIKETHROUGH, MONOSPACE (lib TextStyle.Style). Ranges
 * count UTF-16 code units, as Signal's BodyRange does (JavaScript's string
 * indices). Only markup the agent wrote becomes a style; the words are the
 * plain-text renderer's (plain-text.ts), so nothing is lost, and the text is
 * never longer in UTF-8 than the Markdown it came from (a part cut to 2 000
 * bytes stays within signal-cli's limit).
 */
export interface SignalText {
  readonly text: string;
  readonly textStyle: readonly string[];
}

type Style = 'BOLD' | 'ITALIC' | 'STRIKETHROUGH' | 'MONOSPACE';

class Builder {
  text = '';
  readonly styles: { start: number; length: number; style: Style }[] = [];

  add(text: string): void {
    this.text += text;
  }

  styled(style: Style, write: () => void): void {
    const start = this.text.length;
    write();
    const length = this.text.length - start;
    if (length > 0 && this.text.slice(start).trim() !== '') this.styles.push({ start, length, style });
  }
}

export function markdownToSignal(markdown: string): SignalText {
  const out = new Builder();
  parseMarkdown(markdown).forEach((node, i) => {
    if (i > 0) out.add('\n');
    block(out, node);
  });
  return { text: out.text, textStyle: out.styles.map((range) => `${range.start}:${range.length}:${range.style}`) };
}

function block(out: Builder, node: Block): void {
  switch (node.type) {
    case 'line':
      // A bullet stays "- " (the parser's "• " is 3 bytes of UTF-8 where the Markdown had 1).
      out.add(node.indent + (node.marker === '• ' ? '- ' : node.marker));
      inlines(out, node.children);
      return;
    case 'heading':
      out.styled('BOLD', () => inlines(out, node.children));
      return;
    case 'code-block':
      if (node.info !== '') out.add(`${node.info}\n`);
      out.styled('MONOSPACE', () => out.add(node.text));
      return;
    case 'quote':
      node.blocks.forEach((inner, i) => {
        if (i > 0) out.add('\n');
        // Each line of the quote starts with "> " as in the Markdown, so a quoted part is never
        // longer in bytes than its source (a bar like ▍ is 3 bytes of UTF-8 and could push a
        // 2 000-byte part over signal-cli's limit).
        const start = out.text.length;
        block(out, inner);
        const written = out.text.slice(start);
        out.text = out.text.slice(0, start) + written.split('\n').map((line) => `${prefixOf(line)}${line}`).join('\n');
        shiftStyles(out, start, written);
      });
      return;
    case 'rule':
      // ASCII dashes: an em dash is 3 bytes of UTF-8 where the Markdown's "---" had 1.
      out.add('-'.repeat(ruleLine(node.width).length));
      return;
    case 'table':
      out.styled('MONOSPACE', () => out.add(tableText(node, plainInlines)));
      return;
  }
}

/** A quoted line's prefix: "> ", or ">" alone on an empty line (as the Markdown had it). */
function prefixOf(line: string): string {
  return line === '' ? '>' : '> ';
}

/** After the prefixes were put before each line of `written` (from `start`), the styles inside it move with their text. */
function shiftStyles(out: Builder, start: number, written: string): void {
  const lines = written.split('\n');
  const lineStarts: { at: number; added: number }[] = [];
  let at = 0;
  for (const line of lines) {
    lineStarts.push({ at, added: prefixOf(line).length });
    at += line.length + 1;
  }
  const shift = (offset: number) => lineStarts.filter((lineStart) => lineStart.at <= offset).reduce((sum, lineStart) => sum + lineStart.added, 0);
  for (const range of out.styles) {
    if (range.start < start) continue;
    const from = range.start - start;
    const to = from + range.length;
    const newFrom = from + shift(from);
    const newTo = to + shift(to - 1);
    range.start = start + newFrom;
    range.length = newTo - newFrom;
  }
}

function inlines(out: Builder, nodes: readonly Inline[]): void {
  for (const node of nodes) inline(out, node);
}

function inline(out: Builder, node: Inline): void {
  switch (node.type) {
    case 'text':
      out.add(node.text);
      return;
    case 'code':
      out.styled('MONOSPACE', () => out.add(node.text));
      return;
    case 'bold':
      out.styled('BOLD', () => inlines(out, node.children));
      return;
    case 'italic':
      out.styled('ITALIC', () => inlines(out, node.children));
      return;
    case 'strike':
      out.styled('STRIKETHROUGH', () => inlines(out, node.children));
      return;
    case 'link': {
      const label = plainInlines(node.children);
      inlines(out, node.children);
      if (label !== node.url) out.add(` (${node.url})`);
      return;
    }
  }
}

/**
 * The body of one part as sent: its styled text, unless that came out longer
 * than `maxBytes` of UTF-8 (a quote written `>x` gains a space per line), in
 * which case the Markdown itself goes, unstyled, so no part outgrows the limit
 * its chunk was cut to.
 */
export function signalBody(markdown: string, maxBytes: number): SignalText {
  const rendered = markdownToSignal(markdown);
  return Buffer.byteLength(rendered.text) <= maxBytes ? rendered : { text: markdown, textStyle: [] };
}
