import { useEffect, useRef } from 'react';
import { shortcutFor, type ShortcutAction } from './shortcuts';

/** Input types that take no typed text: keys pressed there can still be shortcuts. */
const NOT_TEXT = new Set(['button', 'checkbox', 'radio', 'range', 'color', 'file', 'submit', 'reset', 'image']);

/** Whether key presses at `target` go into a text field (or a select, whose arrow keys are its own). */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement || target.isContentEditable) return true;
  return target instanceof HTMLInputElement && !NOT_TEXT.has(target.type);
}

/**
 * Calls `run` for each shortcut pressed anywhere in the window (the latest
 * `run`, without re-listening). A modal dialog has the keyboard to itself.
 */
export function useShortcuts(run: (action: ShortcutAction) => void): void {
  const latest = useRef(run);
  latest.current = run;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.isComposing || document.querySelector('dialog[open]')) return;
      // Alt+↓ opens a select's list: there it stays the select's.
      if (event.target instanceof HTMLSelectElement) return;
      const action = shortcutFor(event, isTypingTarget(event.target));
      if (!action) return;
      event.preventDefault();
      latest.current(action);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}
