import { useEffect, useRef, useState, type RefObject } from 'react';

/**
 * A native <dialog> shown modal for as long as the component lives: focus
 * stays in it and Escape cancels (the dialog's `cancel` event). It is
 * unmounted rather than closed, so the browser does not hand focus back by
 * itself: when it goes, focus goes back to what opened it, and a keyboard user
 * continues where they were.
 */
export function useModalDialog(): RefObject<HTMLDialogElement | null> {
  const ref = useRef<HTMLDialogElement>(null);
  // Read during the first render, before the dialog takes focus.
  const [opener] = useState(() => (document.activeElement instanceof HTMLElement ? document.activeElement : null));
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal?.();
    return () => {
      dialog?.close?.();
      if (opener?.isConnected && opener !== document.body) opener.focus();
    };
  }, [opener]);
  return ref;
}
