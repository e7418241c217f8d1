import { useCallback, useEffect, useRef, useState } from 'react';
import type { ApiError, GatewayOverview, HomingApi } from '../../../shared/api';
import { useGatewayEvents } from './useGatewayEvents';

export type OverviewState = { readonly overview: GatewayOverview | null; readonly error: ApiError | null; refresh(): void };

/**
 * Everything at a glance (counts, platforms, ledger health, last sweep), read
 * again shortly after anything changes: events are coalesced, so a burst of
 * ten thousand delivery changes costs a handful of reads.
 */
export function useOverview(api: HomingApi): OverviewState {
  const [overview, setOverview] = useState<GatewayOverview | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  const load = useCallback(() => {
    void api.getOverview().then((result) => {
      if (result.ok) {
        setOverview(result.value);
        setError(null);
      } else setError(result.error);
    });
  }, [api]);

  const refresh = useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      load();
    }, 150);
  }, [load]);

  useEffect(() => {
    load();
    const every = setInterval(load, 10_000);
    return () => {
      clearInterval(every);
      clearTimeout(timer.current);
    };
  }, [load]);

  useGatewayEvents(api, (event) => {
    if (event.type !== 'turn.token') refresh();
  });
  return { overview, error, refresh };
}
