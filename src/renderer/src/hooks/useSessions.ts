import { useCallback, useEffect, useRef, useState } from 'react';
import type { ApiError, HomingApi, SessionSummary } from '../../../shared/api';
import { useGatewayEvents } from './useGatewayEvents';

export interface SessionsState {
  readonly sessions: readonly SessionSummary[];
  /** Sessions whose agent turn is running now (the live marker). */
  readonly live: ReadonlySet<string>;
  readonly error: ApiError | null;
  readonly loaded: boolean;
}

/** The conversation list, newest activity first, kept current by session and turn events. */
export function useSessions(api: HomingApi): SessionsState {
  const [sessions, setSessions] = useState<readonly SessionSummary[]>([]);
  const [live, setLive] = useState<ReadonlySet<string>>(new Set());
  const [error, setError] = useState<ApiError | null>(null);
  const [loaded, setLoaded] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  const load = useCallback(() => {
    void api.listSessions({ pageSize: 200 }).then((result) => {
      setLoaded(true);
      if (!result.ok) return setError(result.error);
      setError(null);
      setSessions(result.value.sessions.filter((session) => session.current));
    });
  }, [api]);

  useEffect(() => {
    load();
    return () => clearTimeout(timer.current);
  }, [load]);

  useGatewayEvents(api, (event) => {
    switch (event.type) {
      case 'session.updated':
        if (!timer.current) {
          timer.current = setTimeout(() => {
            timer.current = undefined;
            load();
          }, 100);
        }
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
  return { sessions, live, error, loaded };
}
