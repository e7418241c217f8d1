import { useCallback, useEffect } from 'react';
import type { ApiError, GatewayOverview, HomingApi } from '../../../shared/api';
import { useApiRead } from './useApiRead';
import { useCoalesced } from './useCoalesced';
import { useGatewayEvents } from './useGatewayEvents';

export type OverviewState = { readonly overview: GatewayOverview | null; readonly error: ApiError | null };

/**
 * Everything at a glance (counts, platforms, ledger health, last sweep), read
 * again shortly after anything changes: events are coalesced, so a burst of
 * ten thousand delivery changes costs a handful of reads.
 */
export function useOverview(api: HomingApi): OverviewState {
  const { value: overview, error, load } = useApiRead(useCallback(() => api.getOverview(), [api]), 'overview');
  const refresh = useCoalesced(load, 150);

  useEffect(() => {
    load();
    const every = setInterval(load, 10_000);
    return () => clearInterval(every);
  }, [load]);

  useGatewayEvents(api, (event) => {
    if (event.type !== 'turn.token') refresh();
  });
  return { overview, error };
}
