/**
 * Markdown code fences (CommonMark): a line of three or more backticks or tildes,
 * indented at most three spaces, opens a block with an optional info string (the
 * language); the block ends at a line of the same character, at least as long, with
 * nothing after it. Lines inside a block are content, even if they look like fences.
 */
export interface OpenFence {
  /** The fence characters as they opened the block (```` ``` ````, ```` ```` ````, `~~~`). */
  readonly marker: string;
  /** The info string (language tag), trimmed; may be empty. */
  readonly info: string;
}

const OPENING = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const CLOSING = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

/** What a line does to the fence state: opens a block, closes the open one, or nothing. */
export type FenceLine =
  | { readonly kind: 'open'; readonly fence: OpenFence }
  | { readonly kind: 'close' }
  | { readonly kind: 'content' };

export function classifyLine(line: string, open: OpenFence | undefined): FenceLine {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  if (open) {
    const match = CLOSING.exec(text);
    const run = match?.[1];
    if (run && run[0] === open.marker[0] && run.length >= open.marker.length) return { kind: 'close' };
    return { kind: 'content' };
  }
  const match = OPENING.exec(text);
  const run = match?.[1];
  if (!match || !run) return { kind: 'content' };
  const info = (match[2] ?? '').trim();
  // A backtick in a backtick fence's info string makes it inline code, not a fence.
  if (run[0] === '`' && info.includes('`')) return { kind: 'content' };
  return { kind: 'open', fence: { marker: run, info } };
}
