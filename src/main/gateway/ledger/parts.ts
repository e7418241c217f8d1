/**
 * A reply's parts (the messages it is sent as), stored without repeating its
 * text: each part is a slice of the reply's content when it is one — the
 * usual case, `[start, end]` — or its own text when the split added
 * something (a code fence closed at the cut and reopened in the next part).
 * `null` when the reply goes out as one part, exactly its content.
 */
export type StoredPart = readonly [start: number, end: number] | string;

export function encodeParts(content: string, texts: readonly string[]): string | null {
  if (texts.length === 0 || (texts.length === 1 && texts[0] === content)) return null;
  const parts: StoredPart[] = [];
  let from = 0;
  for (const text of texts) {
    const at = text === '' ? -1 : content.indexOf(text, from);
    if (at < 0) {
      parts.push(text);
    } else {
      parts.push([at, at + text.length]);
      from = at + text.length;
    }
  }
  return JSON.stringify(parts);
}

/** The parts' texts, from the stored form (encodeParts). Throws on a form it did not write. */
export function decodeParts(content: string, stored: string | null): string[] {
  if (stored === null) return [content];
  const parts = JSON.parse(stored) as unknown;
  if (!Array.isArray(parts) || parts.length === 0) throw new Error('a reply\'s stored parts are not a list');
  return parts.map((part: unknown) => {
    if (typeof part === 'string') return part;
    if (Array.isArray(part) && part.length === 2 && Number.isInteger(part[0]) && Number.isInteger(part[1])) {
      return content.slice(part[0] as number, part[1] as number);
    }
    throw new Error('a reply\'s stored part is neither a slice nor a text');
  });
}
