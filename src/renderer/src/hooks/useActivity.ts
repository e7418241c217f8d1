import { useState, useSyncExternalStore } from 'react';
import type { GatewayEvent, HomingApi } from '../../../shared/api';
import { useGatewayEvents } from './useGatewayEvents';

export interface ActivityEntry {
  readonly n: number;
  readonly at: number;
  readonly event: GatewayEvent;
}

/** The last 200 events, kept outside React state: an event re-renders only the list that shows them. */
export interface ActivityLog {
  entries(): readonly ActivityEntry[];
  subscribe(listener: () => void): () => void;
}

const KEPT = 200;

/**
 * The events since the window opened (streamed tokens are left out: the
 * transcript shows them). Lives in App, so switching views keeps it.
 */
export function useActivityLog(api: HomingApi): ActivityLog {
  const [log] = useState(createActivityLog);
  useGatewayEvents(api, log.push);
  return log;
}

/** The log's entries, newest first, for a component that shows them. */
export function useActivity(log: ActivityLog): readonly ActivityEntry[] {
  return useSyncExternalStore(log.subscribe, log.entries);
}

function createActivityLog(): ActivityLog & { push(event: GatewayEvent): void } {
  let entries: readonly ActivityEntry[] = [];
  const listeners = new Set<() => void>();
  return {
    push(event) {
      if (event.type === 'turn.token') return;
      entries = [{ n: (entries[0]?.n ?? 0) + 1, at: Date.now(), event }, ...entries].slice(0, KEPT);
      for (const listener of listeners) listener();
    },
    entries: () => entries,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
