import { join, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isPathUnsafe, isSessionKeyUnsafe, MAX_FILE_NAME_LENGTH, resolveInside, UnsafePathError } from './path-safety';

describe('isPathUnsafe (anything that becomes a file name)', () => {
  it.each([
    ['empty', ''],
    ['dot', '.'],
    ['dot-dot', '..'],
    ['dot-dot inside', 'a..b'],
    ['slash', 'a/b'],
    ['backslash', 'a\\b'],
    ['drive prefix', 'C:x'],
    ['colon (alternate data stream)', 'name:stream'],
    ['NUL', 'a\u0000b'],
    ['newline', 'a\nb'],
    ['DEL', 'a\u007fb'],
    ['reserved CON', 'CON'],
    ['reserved nul, any case', 'nul'],
    ['reserved with extension', 'aux.txt'],
    ['reserved COM1', 'COM1'],
    ['reserved LPT¹', 'LPT¹'],
    ['trailing dot', 'abc.'],
    ['trailing space', 'abc '],
    ['leading space', ' abc'],
    ['fullwidth dots and slash (NFKC folds to ../)', '\uff0e\uff0e\uff0f'],
    ['right-to-left override', '\u202eexe.txt'],
    ['unpaired surrogate', 'a\ud800b'],
    ['over-long', 'x'.repeat(MAX_FILE_NAME_LENGTH + 1)],
  ])('refuses %s', (_what, value) => {
    expect(isPathUnsafe(value)).toBe(true);
  });

  it.each(['20260130-101112-123-9f86d081ab', 'abc', 'a.b', 'x'.repeat(MAX_FILE_NAME_LENGTH), 'émoji😀'])('accepts the plain name %s', (value) => {
    expect(isPathUnsafe(value)).toBe(false);
  });
});

describe('isSessionKeyUnsafe (logical routing keys)', () => {
  it.each([
    ['empty', ''],
    ['a leading dot-dot segment', '../x'],
    ['an interior dot-dot segment', 'spaces/AAA/../../etc'],
    ['a dot-dot segment between colons', 'agent:main:..:x'],
    ['a backslash dot-dot segment', 'a\\..\\b'],
    ['a leading slash', '/etc/passwd'],
    ['a leading backslash', '\\\\server\\share'],
    ['a drive prefix', 'C:\\Windows'],
    ['a lower-case drive prefix', 'c:/windows'],
    ['NUL', 'agent:main:a\u0000b'],
    ['a newline', 'agent:main:a\nb'],
    ['an unpaired surrogate', 'agent:main:\udc00'],
  ])('refuses %s', (_what, value) => {
    expect(isSessionKeyUnsafe(value)).toBe(true);
  });

  it('accepts interior slashes, which Google Chat ids need', () => {
    expect(isSessionKeyUnsafe('agent:main:google_chat:group:spaces/AAAAb1c2D3e:thread:spaces/AAAAb1c2D3e/threads/kVOtO797ZxQ')).toBe(false);
  });

  it('accepts dots that are not a whole segment', () => {
    expect(isSessionKeyUnsafe('agent:main:irc:channel:#Chan.With.Dots')).toBe(false);
    expect(isSessionKeyUnsafe('agent:main:email:group:"odd..name"@example.org')).toBe(false);
  });

  it('differs from the path validator: a Google Chat thread is a valid key but never a file name', () => {
    const value = 'spaces/AAAAb1c2D3e/threads/kVOtO797ZxQ';
    expect(isSessionKeyUnsafe(value)).toBe(false);
    expect(isPathUnsafe(value)).toBe(true);
  });
});

describe('resolveInside', () => {
  const dir = resolve('/tmp/homing-test/sessions');

  it('returns the file directly inside the directory', () => {
    expect(resolveInside(dir, '20260130-101112-123-9f86d081ab', '.jsonl')).toBe(join(dir, '20260130-101112-123-9f86d081ab.jsonl'));
  });

  it.each(['..', '../etc/passwd', 'foo/../../bar', '/etc/passwd', 'C:\\Windows', '..\\..\\x', 'a\u0000b', 'CON', ''])(
    'refuses %j with a clear error',
    (name) => {
      expect(() => resolveInside(dir, name, '.jsonl')).toThrow(UnsafePathError);
      expect(() => resolveInside(dir, name, '.jsonl')).toThrow(/refused/);
    },
  );

  it('refuses a suffix that would climb out even when the name is plain', () => {
    expect(() => resolveInside(dir, 'abc', `${sep}..${sep}..${sep}x`)).toThrow(UnsafePathError);
  });
});
