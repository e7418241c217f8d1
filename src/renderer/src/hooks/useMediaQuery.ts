import { useCallback, useSyncExternalStore } from 'react';

/** Whether a CSS media query matches now, kept current as the window is resized. */
export function useMediaQuery(query: string): boolean {
  const subscribe = useCallback(
    (listener: () => void) => {
      if (typeof matchMedia !== 'function') return () => {};
      const list = matchMedia(query);
      list.addEventListener('change', listener);
      return () => list.removeEventListener('change', listener);
    },
    [query],
  );
  return useSyncExternalStore(subscribe, () => typeof matchMedia === 'function' && matchMedia(query).matches);
}

/** The CSS's one narrow step (styles.css): list → chat → back instead of side by side. */
export const NARROW = '(max-width: 640px)';
