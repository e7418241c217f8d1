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

/**
 * The Deliveries list's data, one 50-row page at a time: only pages that are
 * on screen are fetched, so ten thousand rows cost what fifty do. Any
 * delivery change re-reads the visible pages, coalesced.
 */
export function useDeliveryPages(api: HomingApi, filter: DeliveryFilter): DeliveryPages {
  const [pages, setPages] = useState<ReadonlyMap<number, readonly DeliveryRow[]>>(new Map());
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

  const fetchPage = useCallback(
    (page: number, force: boolean) => {
      if (!force && newest.current.has(page)) return;
      const request = ++requests.current;
      newest.current.set(page, request);
      void api.listDeliveries({ filter: shown.current, page }).then((result) => {
        if (newest.current.get(page) !== request) return;
        if (!result.ok) {
          newest.current.delete(page);
          return setError(result.error);
        }
        setError(null);
        setTotal(result.value.total);
        setPages((previous) => new Map(previous).set(page, result.value.deliveries));
      });
    },
    [api],
  );

  const pagesFor = (first: number, last: number) => {
    const from = Math.floor(first / PAGE_SIZE) + 1;
    const to = Math.floor(Math.max(first, last) / PAGE_SIZE) + 1;
    return Array.from({ length: to - from + 1 }, (_, i) => from + i);
  };

  const reload = useCallback(() => {
    for (const page of pagesFor(...visible.current)) fetchPage(page, true);
  }, [fetchPage]);

  useEffect(() => {
    shown.current = filter;
    // Forget every request of the previous tab: their answers are dropped on arrival.
    newest.current = new Map();
    setPages(new Map());
    setTotal(null);
    setError(null);
    visible.current = [0, 0];
    fetchPage(1, true);
  }, [filter, fetchPage]);

  useOnReconnect(reload);
  const reloadSoon = useCoalesced(reload, 250);
  useGatewayEvents(api, (event) => {
    if (event.type === 'delivery.changed') reloadSoon();
  });

  return {
    total,
    error,
    rowAt: (index) => pages.get(Math.floor(index / PAGE_SIZE) + 1)?.[index % PAGE_SIZE],
    show: (first, last) => {
      visible.current = [first, last];
      for (const page of pagesFor(first, last)) if (!pages.has(page)) fetchPage(page, false);
    },
    reload,
  };
}
