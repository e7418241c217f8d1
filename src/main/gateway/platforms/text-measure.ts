import type { LengthUnit } from './adapter';

/**
 * Lengths in the unit a platform counts. A chunk that is short in one unit can be
 * long in another (an emoji is 1 code point, 2 UTF-16 units, 4 bytes), so every
 * limit check goes through here with the platform's own unit.
 */
export function measure(text: string, unit: LengthUnit): number {
  switch (unit) {
    case 'utf16':
      return text.length;
    case 'bytes':
      // A lone surrogate is encoded as U+FFFD (3 bytes), which byteLength also counts.
      return Buffer.byteLength(text, 'utf8');
    case 'code-points': {
      let count = 0;
      for (const _ of text) count++;
      return count;
    }
  }
}

/** The smallest limit that still fits any single code point (4 bytes, a surrogate pair). */
export function minimumLimit(unit: LengthUnit): number {
  switch (unit) {
    case 'utf16':
      return 2;
    case 'bytes':
      return 4;
    case 'code-points':
      return 1;
  }
}

const graphemeSegmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * User-perceived characters: an emoji with modifiers, a letter with combining marks
 * and `\r\n` each stay one piece, so a split never tears them apart.
 */
export function graphemes(text: string): string[] {
  return Array.from(graphemeSegmenter.segment(text), (segment) => segment.segment);
}
