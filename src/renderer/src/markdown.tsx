import { Fragment, type ReactNode } from 'react';

/**
 * A small Markdown renderer for the agent's replies, into React elements: the
 * text is only ever a text node, so `<script>` or `<img onerror>` in a reply
 * shows as those characters and never becomes HTML (no dangerouslySetInnerHTML
 * anywhere). It knows what chat replies use: fenced code blocks, inline code,
 * bold, italics, links (http, https and mailto only), headings, lists and
 * quotes. Anything else is shown as written.
 */

type Block =
  | { readonly kind: 'code'; readonly lang: string; readonly text: string }
  | { readonly kind: 'heading'; readonly level: number; readonly text: string }
  | { readonly kind: 'list'; readonly ordered: boolean; readonly items: string[] }
  | { readonly kind: 'quote'; readonly text: string }
  | { readonly kind: 'paragraph'; readonly text: string };

const FENCE = /^\s*(```|~~~)\s*([\w+-]*)\s*$/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d{1,9}[.)]\s+(.*)$/;
const QUOTE = /^\s*>\s?(.*)$/;

export function parseBlocks(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length > 0) blocks.push({ kind: 'paragraph', text: paragraph.join('\n') });
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const body: string[] = [];
      // An unclosed fence (a reply still streaming) runs to the end.
      for (i++; i < lines.length && !(FENCE.exec(lines[i]!)?.[1] === fence[1]); i++) body.push(lines[i]!);
      blocks.push({ kind: 'code', lang: fence[2] ?? '', text: body.join('\n') });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      blocks.push({ kind: 'heading', level: heading[1]!.length, text: heading[2]! });
      continue;
    }
    const bullet = BULLET.exec(line);
    const numbered = bullet ? null : NUMBERED.exec(line);
    if (bullet || numbered) {
      flush();
      const ordered = numbered !== null;
      const items = [(bullet ?? numbered)![1]!];
      const pattern = ordered ? NUMBERED : BULLET;
      while (i + 1 < lines.length && pattern.test(lines[i + 1]!)) items.push(pattern.exec(lines[++i]!)![1]!);
      blocks.push({ kind: 'list', ordered, items });
      continue;
    }
    const quote = QUOTE.exec(line);
    if (quote) {
      flush();
      const quoted = [quote[1]!];
      while (i + 1 < lines.length && QUOTE.test(lines[i + 1]!)) quoted.push(QUOTE.exec(lines[++i]!)![1]!);
      blocks.push({ kind: 'quote', text: quoted.join('\n') });
      continue;
    }
    if (line.trim() === '') flush();
    else paragraph.push(line);
  }
  flush();
  return blocks;
}

/** `code`, **bold**, *em* / _em_, [text](url) and bare http(s) links; everything else is text. */
const INLINE = /`([^`\n]+)`|\*\*([^*\n]+)\*\*|__([^_\n]+)__|\*([^*\s][^*\n]*)\*|(?<![\w])_([^_\s][^_\n]*)_(?![\w])|\[([^\]\n]+)\]\(([^)\s]+)\)|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/g;

/** Only links that open a web page or a mail: never javascript:, data: or file:. */
export function safeHref(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' || parsed.protocol === 'mailto:' ? parsed.href : null;
  } catch {
    return null;
  }
}

function link(href: string, label: ReactNode, key: number): ReactNode {
  const safe = safeHref(href);
  if (!safe) return <Fragment key={key}>{label}</Fragment>;
  return (
    <a key={key} href={safe} target="_blank" rel="noopener noreferrer">
      {label}
    </a>
  );
}

export function renderInline(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  let last = 0;
  let key = 0;
  for (const match of text.matchAll(INLINE)) {
    const at = match.index;
    if (at > last) out.push(text.slice(last, at));
    const [whole, code, bold, bold2, em, em2, label, href, bare] = match;
    if (code !== undefined) out.push(<code key={key++}>{code}</code>);
    else if (bold !== undefined || bold2 !== undefined) out.push(<strong key={key++}>{renderInline(bold ?? bold2!)}</strong>);
    else if (em !== undefined || em2 !== undefined) out.push(<em key={key++}>{renderInline(em ?? em2!)}</em>);
    else if (label !== undefined && href !== undefined) out.push(link(href, renderInline(label), key++));
    else if (bare !== undefined) out.push(link(bare, bare, key++));
    else out.push(whole);
    last = at + whole.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** Lines inside a paragraph keep their breaks, as chat text does. */
function withBreaks(text: string): ReactNode[] {
  return text.split('\n').flatMap((line, index) => (index === 0 ? renderInline(line) : [<br key={`br${index}`} />, ...renderInline(line)]));
}

export function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      {parseBlocks(text).map((block, index) => {
        switch (block.kind) {
          case 'code':
            return (
              <pre key={index} className="code-block" data-lang={block.lang || undefined}>
                <code>{block.text}</code>
              </pre>
            );
          case 'heading': {
            // Inside a bubble a heading is bold text, not a document outline (h1 is the window's).
            return (
              <p key={index} className={`md-heading md-h${block.level}`}>
                <strong>{renderInline(block.text)}</strong>
              </p>
            );
          }
          case 'list': {
            const items = block.items.map((item, n) => <li key={n}>{renderInline(item)}</li>);
            return block.ordered ? <ol key={index}>{items}</ol> : <ul key={index}>{items}</ul>;
          }
          case 'quote':
            return <blockquote key={index}>{withBreaks(block.text)}</blockquote>;
          case 'paragraph':
            return <p key={index}>{withBreaks(block.text)}</p>;
        }
      })}
    </div>
  );
}
