import { useEffect, useRef } from 'react';

/**
 * Where focus goes as a card's form opens and closes, so a keyboard or screen
 * reader user stays where they asked to be, also on a narrow window.
 */

/** A form opened from a card (Edit, or a platform chosen in "Add a platform") takes focus on its first field, which the browser scrolls into view. */
export function useFocusOnOpen() {
  const ref = useRef<HTMLFormElement>(null);
  useEffect(() => ref.current?.querySelector<HTMLElement>('input, select, textarea')?.focus(), []);
  return ref;
}

/** When the card's form closes with focus inside it (its Close button), focus goes back to the card's Edit button instead of the page's start. */
export function useFocusBackOnClose(editing: boolean) {
  const ref = useRef<HTMLButtonElement>(null);
  const wasEditing = useRef(editing);
  useEffect(() => {
    const lost = document.activeElement === null || document.activeElement === document.body;
    if (wasEditing.current && !editing && lost) ref.current?.focus();
    wasEditing.current = editing;
  }, [editing]);
  return ref;
}
