import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { ApiError, HomingApi, SessionSummary } from '../../../shared/api';
import { useOnReconnect } from '../connection';
import { useCoalesced } from './useCoalesced';
import { useGatewayEvents } from './useGatewayEvents';

export interface SessionsState {
  readonly sessions: readonly SessionSummary[];
  /** Sessions whose agent turn is running now (the live marker), each with the agent that answers. */
  readonly live: ReadonlyMap<string, string | null>;
  readonly error: ApiError | null;
  /** Whether older conversations exist beyond those loaded. */
  readonly more: boolean;
  /** Loads the next page of older conversations. */
  loadMore(): void;
}

const PAGE_SIZE = 200;

type Loaded = { sessions: readonly SessionSummary[]; next: string | null };

/** The list as last read, for the window's lifetime: opened while the gateway is away, the view shows it (marked last known by the header). */
let lastKnown: Loaded | null = null;

/**
 * The conversation list, newest activity first, kept current by session and
 * turn events. Pages are read by keyset cursor, each after the previous one's
 * `nextCursor`; a refresh walks again from the top through as many pages as are
 * shown, so a conversation that moved up is neither lost nor listed twice.
 */
export function useSessions(api: HomingApi): SessionsState {
  const [loaded, setLoaded] = useState<Loaded | null>(lastKnown);
  const [error, setError] = useState<ApiError | null>(null);
  const pagesShown = useRef(1);
  // Only the newest walk may fill the list: an older one arriving last would show stale rows.
  const walks = useRef(0);
  const load = useCallback(() => {
    const self = ++walks.current;
    void (async () => {
      const sessions: SessionSummary[] = [];
      let cursor: string | null = null;
      for (let page = 1; page <= pagesShown.current; page++) {
        const result = await api.listSessions({ pageSize: PAGE_SIZE, ...(cursor ? { cursor } : {}) });
        if (walks.current !== self) return;
        if (!result.ok) return setError(result.error);
        sessions.push(...result.value.sessions);
        cursor = result.value.nextCursor;
        if (!cursor) break;
      }
      setError(null);
      lastKnown = { sessions, next: cursor };
      setLoaded(lastKnown);
    })();
  }, [api]);
  const sessions = useMemo(() => loaded?.sessions.filter((session) => session.current) ?? [], [loaded]);
  /** Conversations being answered now, each with the agent that answers (null when the gateway did not say). */
  const [live, setLive] = useState<ReadonlyMap<string, string | null>>(new Map());
  const reload = useCoalesced(load, 100);

  useEffect(load, [load]);
  useOnReconnect(load);

  useGatewayEvents(api, (event) => {
    switch (event.type) {
      case 'session.updated':
        reload();
        return;
      case 'turn.started':
        setLive((previous) => new Map(previous).set(event.sessionId, event.agent ?? null));
        return;
      case 'turn.finished':
        setLive((previous) => {
          const next = new Map(previous);
          next.delete(event.sessionId);
          return next;
        });
        return;
      default:
        return;
    }
  });
  const loadMore = useCallback(() => {
    pagesShown.current++;
    load();
  }, [load]);
  return { sessions, live, error, more: loaded?.next != null, loadMore };
}
