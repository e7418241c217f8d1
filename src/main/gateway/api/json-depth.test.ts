import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from './json-depth';

function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { a: value };
  return value;
}

describe('nestsDeeperThan', () => {
  it('counts objects and arrays, not scalars', () => {
    expect(nestsDeeperThan(1, 0)).toBe(false);
    expect(nestsDeeperThan('text', 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan(nested(3), 3)).toBe(false);
    expect(nestsDeeperThan(nested(4), 3)).toBe(true);
  });

  it('finds the deep branch among shallow ones', () => {
    // The outer object, c's object, then the nested levels.
    expect(nestsDeeperThan({ a: 1, b: [1, 2], c: { d: nested(9) } }, 10)).toBe(true);
    expect(nestsDeeperThan({ a: 1, b: [1, 2], c: { d: nested(8) } }, 10)).toBe(false);
  });

  it('walks 100 000 levels without overflowing the stack', () => {
    const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)) as unknown;
    expect(nestsDeeperThan(deep, 64)).toBe(true);
  });
});
