import { useCallback, useLayoutEffect, useRef, useState, type RefObject } from 'react';

export interface VirtualWindow {
  readonly scrollRef: RefObject<HTMLDivElement | null>;
  readonly first: number;
  readonly last: number;
  readonly onScroll: () => void;
}

/**
 * Which rows of a fixed-height list are on screen (plus a few either side).
 * Only those are rendered, so the list stays smooth at any length.
 */
export function useVirtualWindow(count: number, rowHeight: number, overscan = 4): VirtualWindow {
  const scrollRef = useRef<HTMLDivElement | null>(null);
  const [range, setRange] = useState<[number, number]>([0, Math.min(count, 12) - 1]);

  const measure = useCallback(() => {
    const element = scrollRef.current;
    if (!element) return;
    const top = element.scrollTop;
    const height = element.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / rowHeight) - overscan);
    const last = Math.min(count - 1, Math.ceil((top + height) / rowHeight) + overscan);
    setRange((previous) => (previous[0] === first && previous[1] === last ? previous : [first, last]));
  }, [count, rowHeight, overscan]);

  useLayoutEffect(() => {
    measure();
    const element = scrollRef.current;
    if (!element || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, [measure]);

  return { scrollRef, first: range[0], last: range[1], onScroll: measure };
}
