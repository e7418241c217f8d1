import { describe, expect, it } from 'vitest';
import { shortcutFor, stepThrough, type KeyPress } from './shortcuts';

const press = (key: string, modifiers: Partial<Omit<KeyPress, 'key'>> = {}): KeyPress => ({
  key,
  altKey: false,
  ctrlKey: false,
  metaKey: false,
  shiftKey: false,
  ...modifiers,
});

describe('keyboard shortcuts', () => {
  it('moves between conversations with Alt+↓ and Alt+↑, also while typing', () => {
    for (const typing of [false, true]) {
      expect(shortcutFor(press('ArrowDown', { altKey: true }), typing)).toBe('next-conversation');
      expect(shortcutFor(press('ArrowUp', { altKey: true }), typing)).toBe('previous-conversation');
    }
    expect(shortcutFor(press('ArrowDown'), false)).toBeNull();
  });

  it('takes single keys only when no text field has focus', () => {
    expect(shortcutFor(press('/'), false)).toBe('search');
    expect(shortcutFor(press('c'), false)).toBe('write');
    expect(shortcutFor(press('?', { shiftKey: true }), false)).toBe('help');
    for (const key of ['/', 'c', '?']) expect(shortcutFor(press(key), true)).toBeNull();
  });

  it('leaves the browser its own keys: Ctrl+F finds, Ctrl+C copies', () => {
    expect(shortcutFor(press('f', { ctrlKey: true }), false)).toBeNull();
    expect(shortcutFor(press('c', { ctrlKey: true }), false)).toBeNull();
    expect(shortcutFor(press('c', { metaKey: true }), false)).toBeNull();
    expect(shortcutFor(press('F', { ctrlKey: true, shiftKey: true }), true)).toBe('search');
  });

  it('steps through a list without wrapping, starting at the top when the current item is not listed', () => {
    const items = [null, 'a', 'b'];
    expect(stepThrough(items, null, 1)).toBe('a');
    expect(stepThrough(items, 'b', 1)).toBe('b');
    expect(stepThrough(items, 'a', -1)).toBeNull();
    expect(stepThrough(items, null, -1)).toBeNull();
    expect(stepThrough(items, 'gone', 1)).toBeNull();
    expect(stepThrough([], 'a', 1)).toBeUndefined();
  });
});
