import { createContext, useContext, useEffect, useRef, useSyncExternalStore } from 'react';

/**
 * Whether this window can reach the gateway right now. `reconnecting`: the
 * connection dropped a moment ago and a new one is being tried; `gone`: the
 * tries fail (the gateway stopped, or restarts); `refused`: no connection will
 * ever come (a headless window opened without its token).
 */
export type ConnectionState =
  | { readonly kind: 'connecting' }
  | { readonly kind: 'connected'; readonly since: number }
  | { readonly kind: 'reconnecting'; readonly lostAt: number; readonly nextTryAt: number | null }
  | { readonly kind: 'gone'; readonly lostAt: number; readonly nextTryAt: number | null }
  | { readonly kind: 'refused'; readonly reason: string };

/** Where this window runs: in the tray app (its gateway is supervised) or in a browser tab on the headless gateway. */
export type WindowMode = 'app' | 'headless';

export interface ConnectionMonitor {
  readonly mode: WindowMode;
  get(): ConnectionState;
  subscribe(listener: () => void): () => void;
}

/** The monitor's writable side, for `connect.ts`. */
export interface ConnectionReporter extends ConnectionMonitor {
  set(state: ConnectionState): void;
}

export function createConnectionMonitor(mode: WindowMode): ConnectionReporter {
  let state: ConnectionState = { kind: 'connecting' };
  const listeners = new Set<() => void>();
  return {
    mode,
    get: () => state,
    set(next) {
      state = next;
      for (const listener of listeners) listener();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** A monitor that is always connected (tests, and components shown without one). */
export const ALWAYS_CONNECTED: ConnectionMonitor = {
  mode: 'headless',
  get: () => CONNECTED,
  subscribe: () => () => {},
};
const CONNECTED: ConnectionState = { kind: 'connected', since: 0 };

export function useConnectionState(monitor: ConnectionMonitor): ConnectionState {
  return useSyncExternalStore(monitor.subscribe, monitor.get);
}

/** Whether actions that need the gateway can run. */
export function isOnline(state: ConnectionState): boolean {
  return state.kind === 'connected';
}

/** The window's monitor, for any component: App provides it. */
export const ConnectionContext = createContext<ConnectionMonitor>(ALWAYS_CONNECTED);

export function useConnection(): ConnectionState {
  return useConnectionState(useContext(ConnectionContext));
}

/** Whether actions that need the gateway can run now (buttons use it to disable themselves). */
export function useOnline(): boolean {
  return isOnline(useConnection());
}

/**
 * Calls `run` each time the connection comes back after it was lost (not on
 * the first connect, whose calls were queued): what a view shows as last known
 * is read again, without a reload.
 */
export function useOnReconnect(run: () => void): void {
  const monitor = useContext(ConnectionContext);
  const latest = useRef(run);
  latest.current = run;
  useEffect(() => {
    let wasLost = monitor.get().kind === 'reconnecting' || monitor.get().kind === 'gone';
    return monitor.subscribe(() => {
      const kind = monitor.get().kind;
      if (kind === 'reconnecting' || kind === 'gone') wasLost = true;
      else if (kind === 'connected' && wasLost) {
        wasLost = false;
        latest.current();
      }
    });
  }, [monitor]);
}
