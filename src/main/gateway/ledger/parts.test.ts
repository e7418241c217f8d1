import { describe, expect, it } from 'vitest';
import { splitReply } from '../delivery/reply-parts';
import { decodeParts, encodeParts } from './parts';

describe("a reply's parts, stored as slices of its text", () => {
  it('stores nothing for a reply sent as its content, and gives the content back', () => {
    expect(encodeParts('hello', ['hello'])).toBeNull();
    expect(encodeParts('hello', [])).toBeNull();
    expect(decodeParts('hello', null)).toEqual(['hello']);
  });

  it('keeps the split exactly — slices where a part is the text, the text where the split changed it — for real splits', () => {
    const prose = 'Sure — here is what I found, with an emoji 🏠 or two. '.repeat(200);
    const code = `Here is the script:\n\n\`\`\`python\n${'print("a line of code")\n'.repeat(300)}\`\`\`\nand that is it.  \n`;
    for (const [content, limits] of [
      [prose, { maxLength: 4096, unit: 'utf16' }],
      [prose, { maxLength: 400, unit: 'bytes' }],
      [code, { maxLength: 2000, unit: 'code-points' }],
      ['one line with trailing space   \n', { maxLength: 4096, unit: 'utf16' }],
    ] as const) {
      const texts = splitReply(content, limits);
      const stored = encodeParts(content, texts);
      expect(decodeParts(content, stored)).toEqual(texts);
      // The text is stored once: what is stored is far smaller than the text whenever the parts are slices of it.
      if (content === prose) expect(stored!.length).toBeLessThan(content.length / 10);
    }
  });

  it('says so, instead of guessing, when what is stored is not a form it wrote', () => {
    expect(() => decodeParts('x', '{}')).toThrow(/not a list/);
    expect(() => decodeParts('x', '[[1]]')).toThrow(/neither a slice nor a text/);
    expect(() => decodeParts('x', '[]')).toThrow(/not a list/);
  });
});
