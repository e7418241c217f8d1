/**
 * Keyset pagination's cursor: the sort key of the last row of a page, and the
 * number of the page it leads to. The next page is read by seeking an index
 * past that key, so page 19 000 costs what page 1 does, and rows inserted
 * between two reads neither repeat nor shift a row out of the walk (OFFSET does
 * both). Callers treat the string as opaque: they pass back what a page gave
 * them. base64url of a JSON array, so it survives a URL, a shell and a flag.
 */
export interface PageCursor {
  /** The sort key of the last row already seen: (time, id), newest first. */
  readonly at: number;
  readonly id: string;
  /** The 1-based number of the page this cursor reads. */
  readonly page: number;
}

const MAX_CURSOR_CHARS = 200;

export function encodeCursor(cursor: PageCursor): string {
  const json = JSON.stringify([cursor.at, cursor.id, cursor.page]);
  return btoa(json).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The cursor a string carries, or undefined when it is not one `encodeCursor` made. */
export function decodeCursor(text: string): PageCursor | undefined {
  if (text.length === 0 || text.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(atob(text.replace(/-/g, '+').replace(/_/g, '/')));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 3) return undefined;
  const [at, id, page] = value as unknown[];
  if (!Number.isSafeInteger(at) || typeof id !== 'string' || !/^[0-9A-Za-z-]{1,64}$/.test(id)) return undefined;
  if (!Number.isSafeInteger(page) || (page as number) < 2) return undefined;
  return { at: at as number, id, page: page as number };
}

export function isCursor(text: string): boolean {
  return decodeCursor(text) !== undefined;
}
