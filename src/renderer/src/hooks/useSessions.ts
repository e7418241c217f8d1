import { useCallback, useEffect, useMemo, useState } from 'react';
import type { ApiError, HomingApi, SessionSummary } from '../../../shared/api';
import { useApiRead } from './useApiRead';
import { useCoalesced } from './useCoalesced';
import { useGatewayEvents } from './useGatewayEvents';

export interface SessionsState {
  readonly sessions: readonly SessionSummary[];
  /** Sessions whose agent turn is running now (the live marker). */
  readonly live: ReadonlySet<string>;
  readonly error: ApiError | null;
}

/** The conversation list, newest activity first, kept current by session and turn events. */
export function useSessions(api: HomingApi): SessionsState {
  const { value: page, error, load } = useApiRead(useCallback(() => api.listSessions({ pageSize: 200 }), [api]), 'sessions');
  const sessions = useMemo(() => page?.sessions.filter((session) => session.current) ?? [], [page]);
  const [live, setLive] = useState<ReadonlySet<string>>(new Set());
  const reload = useCoalesced(load, 100);

  useEffect(load, [load]);

  useGatewayEvents(api, (event) => {
    switch (event.type) {
      case 'session.updated':
        reload();
        return;
      case 'turn.started':
        setLive((previous) => new Set(previous).add(event.sessionId));
        return;
      case 'turn.finished':
        setLive((previous) => {
          const next = new Set(previous);
          next.delete(event.sessionId);
          return next;
        });
        return;
      default:
        return;
    }
  });
  return { sessions, live, error };
}
