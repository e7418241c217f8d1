import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeChunkKey, computeObligationId } from './obligation-id';

describe('computeObligationId', () => {
  it('is the first 24 hex characters of sha256 of sessionKey|messageRef|content in UTF-8', () => {
    const expected = createHash('sha256').update('agent:main:irc:direct:alice|msg-1|héllo ↻', 'utf8').digest('hex').slice(0, 24);
    expect(computeObligationId('agent:main:irc:direct:alice', 'msg-1', 'héllo ↻')).toBe(expected);
    // A fixed vector, so a change of the recipe cannot pass unnoticed.
    expect(computeObligationId('s', 'm', 'c')).toBe('10484cfa63a6fe5384d1561d');
    expect(computeObligationId('s', 'm', 'c')).toMatch(/^[0-9a-f]{24}$/);
  });

  it('is stable: the same turn and content always give the same id', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (key, ref, content) => {
        // The recipe, for any input: nothing but the three strings (no time, no randomness) goes in.
        expect(computeObligationId(key, ref, content)).toBe(createHash('sha256').update(`${key}|${ref}|${content}`, 'utf8').digest('hex').slice(0, 24));
      }),
    );
  });

  it('is distinct for a different session, message or content', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), fc.string({ minLength: 1 }), (key, ref, content, extra) => {
        const id = computeObligationId(key, ref, content);
        expect(computeObligationId(key + extra, ref, content)).not.toBe(id);
        expect(computeObligationId(key, ref + extra, content)).not.toBe(id);
        expect(computeObligationId(key, ref, content + extra)).not.toBe(id);
      }),
    );
    const ids = new Set(Array.from({ length: 10_000 }, (_, n) => computeObligationId('k', `m${n}`, 'same reply')));
    expect(ids.size).toBe(10_000);
  });
});

describe('computeChunkKey', () => {
  it('is stable per chunk, distinct between chunks, and fits a Discord nonce (≤ 25 characters)', () => {
    const id = computeObligationId('k', 'm', 'c');
    expect(computeChunkKey(id, 0)).toBe(computeChunkKey(id, 0));
    expect(computeChunkKey(id, 0)).not.toBe(computeChunkKey(id, 1));
    expect(computeChunkKey(id, 3).length).toBeLessThanOrEqual(25);
  });
});
