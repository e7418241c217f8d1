import { useCallback, useEffect, useRef, useState } from 'react';
import type { ApiError, DeliveryFilter, DeliveryRow, HomingApi } from '../../../shared/api';
import { useOnReconnect } from '../connection';
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
 * The Deliveries list's data, one 50-row page at a time: only pages that are
 * on screen are fetched, so ten thousand rows cost what fifty do. A page whose
 * predecessor is loaded is read after that page's cursor (an index seek, as
 * cheap at row 950 000 as at row 50); only a jump of the scrollbar to a page
 * with no loaded predecessor reads it by its number, once, and the pages
 * around it follow by cursor again. Any delivery change re-reads the visible
 * pages in order, coalesced; loaded pages after them are dropped when the last
 * one no longer ends where it did, since they no longer follow on.
 */
export function useDeliveryPages(api: HomingApi, filter: DeliveryFilter): DeliveryPages {
  const [pages, setPages] = useState<ReadonlyMap<number, LoadedPage>>(new Map());
  // The same map, read when a request goes out (a closure would hold an old one).
  const loaded = useRef<ReadonlyMap<number, LoadedPage>>(pages);
  const [total, setTotal] = useState<number | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const visible = useRef<[number, number]>([0, 0]);
  // The tab the list shows now. Read when a request goes out, never from a closure:
  // a reload scheduled before a tab switch must fetch the new tab, not the old one.
  const shown = useRef(filter);
  // Each request's number; only the newest request for a page may fill it, so an
  // answer that was overtaken (an older read arriving last) never shows stale rows.
  const requests = useRef(0);
  const newest = useRef(new Map<number, number>());

  const store = (next: ReadonlyMap<number, LoadedPage>) => {
    loaded.current = next;
    setPages(next);
  };

  /** Reads `page`; resolves true once it is stored (false: overtaken, failed or not needed). */
  const fetchPage = useCallback(
    async (page: number, force: boolean): Promise<boolean> => {
      if (!force && newest.current.has(page)) return false;
      const previous = loaded.current.get(page - 1);
      if (previous && previous.next === null) return false; // the list ends before this page
      const request = ++requests.current;
      newest.current.set(page, request);
      const where = previous ? { cursor: previous.next! } : page > 1 ? { page } : {};
      const result = await api.listDeliveries({ filter: shown.current, ...where });
      if (newest.current.get(page) !== request) return false;
      if (!result.ok) {
        newest.current.delete(page);
        setError(result.error);
        return false;
      }
      setError(null);
      setTotal(result.value.total);
      store(new Map(loaded.current).set(page, { rows: result.value.deliveries, next: result.value.nextCursor }));
      return true;
    },
    [api],
  );

  const pagesFor = (first: number, last: number) => {
    const from = pageOf(first);
    const to = pageOf(Math.max(first, last));
    return Array.from({ length: to - from + 1 }, (_, i) => from + i);
  };

  const reload = useCallback(() => {
    const wanted = pagesFor(...visible.current);
    void (async () => {
      // In order, so each page is read after the cursor its predecessor has now.
      for (const page of wanted) {
        const before = loaded.current.get(page)?.next;
        if (!(await fetchPage(page, true))) return;
        if (page === wanted.at(-1) && loaded.current.get(page)?.next !== before) {
          const kept = new Map([...loaded.current].filter(([number]) => number <= page));
          for (const number of newest.current.keys()) if (number > page) newest.current.delete(number);
          store(kept);
        }
      }
    })();
  }, [fetchPage]);

  useEffect(() => {
    shown.current = filter;
    // Forget every request of the previous tab: their answers are dropped on arrival.
    newest.current = new Map();
    store(new Map());
    setTotal(null);
    setError(null);
    visible.current = [0, 0];
    void fetchPage(1, true);
  }, [filter, fetchPage]);

  useOnReconnect(reload);
  const reloadSoon = useCoalesced(reload, 250);
  useGatewayEvents(api, (event) => {
    if (event.type === 'delivery.changed') reloadSoon();
  });

  return {
    total,
    error,
    rowAt: (index) => pages.get(pageOf(index))?.rows[index % PAGE_SIZE],
    show: (first, last) => {
      visible.current = [first, last];
      const wanted = pagesFor(first, last).filter((page) => !newest.current.has(page));
      // In order: once the first arrives, the next is read after its cursor.
      void (async () => {
        for (const page of wanted) await fetchPage(page, false);
      })();
    },
    reload,
  };
}
