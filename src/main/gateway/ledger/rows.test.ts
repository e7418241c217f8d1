import { describe, expect, it } from 'vitest';
import { PREVIEW_CHARS, previewOf } from './rows';

describe('previewOf', () => {
  it('folds every run of whitespace into one space and trims, whatever the whitespace', () => {
    expect(previewOf('  one two  three\tfour\nfive\r\n six\u00a0seven\u2028eight  ')).toBe('one two three four five six seven eight');
    expect(previewOf('single spaces only, nothing to fold ')).toBe('single spaces only, nothing to fold');
    expect(previewOf('\n')).toBe('');
  });

  it('cuts at PREVIEW_CHARS code points with an ellipsis, never inside an emoji', () => {
    // Two UTF-16 units an emoji after the 'a': a cut by units would split the last one kept.
    const preview = previewOf(`a${'🙂'.repeat(PREVIEW_CHARS)}`);
    expect([...preview]).toHaveLength(PREVIEW_CHARS);
    expect(preview).toBe(`a${'🙂'.repeat(PREVIEW_CHARS - 2)}…`);
    expect(previewOf('x'.repeat(PREVIEW_CHARS))).toBe('x'.repeat(PREVIEW_CHARS));
    // A run folded away makes room: the preview is measured after folding.
    expect(previewOf(`${'a '.repeat(50)}${' '.repeat(300)}${'b'.repeat(19)}`)).toBe(`${'a '.repeat(50)}${'b'.repeat(19)}`);
  });
});
