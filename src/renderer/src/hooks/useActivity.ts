import { useState } from 'react';
import type { GatewayEvent, HomingApi } from '../../../shared/api';
import { useGatewayEvents } from './useGatewayEvents';

export interface ActivityEntry {
  readonly n: number;
  readonly at: number;
  readonly event: GatewayEvent;
}

/** The last 200 events since the window opened (streamed tokens are left out: the transcript shows them). Lives in App, so switching views keeps it. */
export function useActivity(api: HomingApi): readonly ActivityEntry[] {
  const [entries, setEntries] = useState<readonly ActivityEntry[]>([]);
  useGatewayEvents(api, (event) => {
    if (event.type === 'turn.token') return;
    setEntries((previous) => [{ n: (previous[0]?.n ?? 0) + 1, at: Date.now(), event }, ...previous].slice(0, 200));
  });
  return entries;
}
