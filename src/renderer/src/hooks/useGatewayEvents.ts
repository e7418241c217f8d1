import { useEffect, useRef } from 'react';
import type { GatewayEvent, HomingApi } from '../../../shared/api';

/** Calls `listener` for every gateway event while the component is mounted (the latest listener, without resubscribing). */
export function useGatewayEvents(api: HomingApi, listener: (event: GatewayEvent) => void): void {
  const latest = useRef(listener);
  latest.current = listener;
  useEffect(() => api.subscribe((event) => latest.current(event)), [api]);
}
