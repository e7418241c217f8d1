/**
 * The window's keyboard shortcuts. None fights typing: a single key (`/`, `c`,
 * `?`) is a shortcut only while no text field has focus, and the ones that work
 * from a text field hold a modifier that types nothing (Alt+↓ / Alt+↑,
 * Ctrl+Shift+F; Ctrl+F stays the browser's find).
 */

export type ShortcutAction = 'next-conversation' | 'previous-conversation' | 'write' | 'search' | 'help';

export interface KeyPress {
  readonly key: string;
  readonly altKey: boolean;
  readonly ctrlKey: boolean;
  readonly metaKey: boolean;
  readonly shiftKey: boolean;
}

/** What a key press does; null: it is not a shortcut (it types, or belongs to the browser). `typing`: a text field has focus. */
export function shortcutFor(press: KeyPress, typing: boolean): ShortcutAction | null {
  const { altKey, ctrlKey, metaKey, shiftKey } = press;
  if (altKey && !ctrlKey && !metaKey && !shiftKey) {
    if (press.key === 'ArrowDown') return 'next-conversation';
    if (press.key === 'ArrowUp') return 'previous-conversation';
    return null;
  }
  if (ctrlKey && shiftKey && !altKey && !metaKey && press.key.toLowerCase() === 'f') return 'search';
  if (typing || altKey || ctrlKey || metaKey) return null;
  // Shift is how some layouts type `/` and how all type `?`: it is not checked for these.
  switch (press.key) {
    case '/':
      return 'search';
    case 'c':
      return 'write';
    case '?':
      return 'help';
    default:
      return null;
  }
}

/** What the `?` dialog lists: each action's keys (any one of them) and what it does. */
export const SHORTCUTS: readonly { readonly keys: readonly (readonly string[])[]; readonly what: string }[] = [
  { keys: [['Alt', '↓']], what: 'Next conversation' },
  { keys: [['Alt', '↑']], what: 'Previous conversation' },
  { keys: [['c']], what: 'Write to your agent (the local chat’s message box)' },
  { keys: [['/'], ['Ctrl', 'Shift', 'F']], what: 'Search conversations' },
  { keys: [['?']], what: 'Show these shortcuts' },
  { keys: [['Esc']], what: 'Close this list' },
];

/** The item `step` places after `current` (before it, for -1), staying at either end; the first item when `current` is not listed. */
export function stepThrough<T>(items: readonly T[], current: T, step: 1 | -1): T | undefined {
  const at = items.indexOf(current);
  if (at === -1) return items[0];
  return items[Math.min(items.length - 1, Math.max(0, at + step))];
}
