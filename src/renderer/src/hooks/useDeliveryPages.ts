import { useCallback, useEffect, useRef, useState } from 'react';
import type { ApiError, DeliveryFilter, DeliveryRow, HomingApi } from '../../../shared/api';
import { useCoalesced } from './useCoalesced';
import { useGatewayEvents } from './useGatewayEvents';

export interface DeliveryPages {
  /** Rows in the tab, or null before the first page arrived. */
  readonly total: number | null;
  readonly error: ApiError | null;
  /** The row at `index` if its page is loaded. */
  rowAt(index: number): DeliveryRow | undefined;
  /** Loads the pages that cover rows `first`..`last` (the visible window). */
  show(first: number, last: number): void;
  /** Reads the visible pages again (after an action). */
  reload(): void;
}

const PAGE_SIZE = 50;

/** A loaded page and the cursor that reads the page after it (null: the list ends here). */
interface LoadedPage {
  readonly rows: readonly DeliveryRow[];
  readonly next: string | null;
}

const pageOf = (index: number) => Math.floor(index / PAGE_SIZE) + 1;

/**
 * The Deliveries list's data, one 50-row page at a time, read by keyset
 * cursors: page N is the page after page N-1's `nextCursor`, so the loaded
 * pages are always pages 1..n, fetched in order up to the last one on screen
 * (a jump deep into the list walks there, each step an index seek). Any
 * delivery change re-reads the visible pages, coalesced; when a re-read page
 * no longer ends where it did, the pages after it are dropped and read again
 * from its new cursor, so the loaded list never has a gap or a repeat.
 */
export function useDeliveryPages(api: HomingApi, filter: DeliveryFilter): DeliveryPages {
  const pages = useRef<readonly LoadedPage[]>([]);
  const [, setVersion] = useState(0);
  const [total, setTotal] = useState<number | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const visible = useRef<[number, number]>([0, 0]);
  // The tab the list shows now. Read when a request goes out, never from a closure:
  // a reload scheduled before a tab switch must fetch the new tab, not the old one.
  const shown = useRef(filter);
  // Each walk's number. A reload or a tab switch starts a new walk, and an older
  // walk stops at its next answer (dropped: it may be overtaken or of the old tab).
  const walks = useRef(0);
  const walking = useRef(0);

  /** Reads pages `from`.. the last visible one, in order; `force` re-reads pages already loaded. */
  const walk = useCallback(
    async (from: number, force: boolean) => {
      const self = ++walks.current;
      walking.current = self;
      try {
        for (let page = from; page <= pageOf(visible.current[1]); page++) {
          const loaded = pages.current;
          if (!force && page <= loaded.length) continue;
          const previous = loaded[page - 2];
          if (page > loaded.length + 1 || (previous && previous.next === null)) return; // the list ends before this page
          const result = await api.listDeliveries({ filter: shown.current, ...(previous ? { cursor: previous.next! } : {}) });
          if (walks.current !== self) return;
          if (!result.ok) return setError(result.error);
          setError(null);
          setTotal(result.value.total);
          const next = result.value.nextCursor;
          const before = pages.current;
          // The pages after this one still follow on only if it ends where it ended.
          const after = before[page - 1]?.next === next ? before.slice(page) : [];
          pages.current = [...before.slice(0, page - 1), { rows: result.value.deliveries, next }, ...after];
          setVersion((version) => version + 1);
        }
      } finally {
        if (walking.current === self) walking.current = 0;
      }
    },
    [api],
  );

  const reload = useCallback(() => void walk(pageOf(visible.current[0]), true), [walk]);

  useEffect(() => {
    shown.current = filter;
    pages.current = [];
    setVersion((version) => version + 1);
    setTotal(null);
    setError(null);
    visible.current = [0, 0];
    void walk(1, true);
  }, [filter, walk]);

  const reloadSoon = useCoalesced(reload, 250);
  useGatewayEvents(api, (event) => {
    if (event.type === 'delivery.changed') reloadSoon();
  });

  return {
    total,
    error,
    rowAt: (index) => pages.current[pageOf(index) - 1]?.rows[index % PAGE_SIZE],
    show: (first, last) => {
      visible.current = [first, last];
      // A running walk reads the visible window at every step: it goes on to the new last page.
      if (walking.current === 0 && pages.current.length < pageOf(last)) void walk(1, false);
    },
    reload,
  };
}
