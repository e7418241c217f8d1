import { ApiClient } from '../../shared/api-client';
import { API_SUBPROTOCOL, TOKEN_STORAGE_KEY, TOKEN_SUBPROTOCOL_PREFIX } from '../../shared/headless-auth';
import type { MessagePipe } from '../../shared/protocol';
import { createConnectionMonitor, type ConnectionMonitor, type ConnectionReporter } from './connection';

/** Waits between tries to reach a headless gateway that went away: quick at first, then every few seconds (loopback is cheap). */
export function retryDelay(attempt: number): number {
  return Math.min(3_000, 250 * 2 ** attempt);
}

/** How long a tray window waits for its supervised gateway to come back before it calls it gone. */
const APP_RESTART_GRACE_MS = 10_000;

/**
 * Builds `window.homing`. In Electron the preload hands over a MessagePort to the
 * gateway process (again after each gateway restart); in a browser the headless
 * server is reached over a WebSocket, reconnecting with backoff.
 */
export function connectHoming(): { client: ApiClient; connection: ConnectionMonitor } {
  const client = new ApiClient();
  if (navigator.userAgent.includes('Electron/')) {
    const connection = createConnectionMonitor('app');
    listenForPorts(client, connection);
    return { client, connection };
  }
  const connection = createConnectionMonitor('headless');
  const token = takeToken();
  if (token) connectWebSocket(client, connection, token, 0, null);
  else {
    const reason = 'this window has no access token: open the URL that `npx homing url` prints';
    client.refuse(reason);
    connection.set({ kind: 'refused', reason });
  }
  return { client, connection };
}

/**
 * The headless server's access token, taken out of the address bar (so it stays
 * out of screenshots, shared links and the tab's history entry) into this tab's
 * sessionStorage, where a reload finds it again. The API needs it explicitly on
 * every connection; no cookie carries it.
 */
function takeToken(): string | null {
  const url = new URL(window.location.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl) {
    url.searchParams.delete('token');
    history.replaceState(history.state, '', url.pathname + url.search + url.hash);
  }
  try {
    if (fromUrl) sessionStorage.setItem(TOKEN_STORAGE_KEY, fromUrl);
    return fromUrl ?? sessionStorage.getItem(TOKEN_STORAGE_KEY);
  } catch {
    // Storage switched off: the token lives in memory, for this page only.
    return fromUrl;
  }
}

function listenForPorts(client: ApiClient, connection: ConnectionReporter): void {
  let goneTimer: ReturnType<typeof setTimeout> | undefined;
  window.addEventListener('message', (event: MessageEvent) => {
    if (event.source !== window || event.data !== 'homing:port' || !event.ports[0]) return;
    const port = event.ports[0];
    const pipe: MessagePipe = {
      send: (message) => port.postMessage(message),
      onMessage: (listener) => {
        port.onmessage = (message) => listener(message.data);
      },
      onClose: (listener) => port.addEventListener('close', listener),
      close: () => port.close(),
    };
    // The supervisor hands over a new port after it restarts the gateway.
    port.addEventListener('close', () => {
      const lostAt = Date.now();
      client.lost('the gateway connection closed');
      connection.set({ kind: 'reconnecting', lostAt, nextTryAt: null });
      clearTimeout(goneTimer);
      goneTimer = setTimeout(() => {
        if (connection.get().kind === 'reconnecting') connection.set({ kind: 'gone', lostAt, nextTryAt: null });
      }, APP_RESTART_GRACE_MS);
    });
    clearTimeout(goneTimer);
    client.attach(pipe);
    connection.set({ kind: 'connected', since: Date.now() });
    port.start();
  });
}

/**
 * One try to reach the headless gateway; on close, the next try after
 * `retryDelay`. The URL and token stay the same: a gateway started again on
 * the same data directory serves the same port and token (headless.json), so
 * this tab reconnects by itself. `lostAt`: when the last good connection ended.
 */
function connectWebSocket(client: ApiClient, connection: ConnectionReporter, token: string, attempt: number, lostAt: number | null): void {
  const url = new URL('api', window.location.href.replace(/^http/, 'ws'));
  url.search = '';
  url.hash = '';
  // The token rides as a subprotocol: not in the URL (logs, devtools), not in a cookie.
  const socket = new WebSocket(url, [API_SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX + token]);
  let opened = false;
  const closeListeners: (() => void)[] = [];
  socket.addEventListener('open', () => {
    opened = true;
    client.attach({
      send: (message) => socket.readyState === WebSocket.OPEN && socket.send(JSON.stringify(message)),
      onMessage: (listener) =>
        socket.addEventListener('message', (event) => {
          try {
            listener(JSON.parse(String(event.data)));
          } catch {
            // A frame that is not JSON is not ours; the protocol ignores it.
          }
        }),
      onClose: (listener) => closeListeners.push(listener),
      close: () => socket.close(),
    });
    connection.set({ kind: 'connected', since: Date.now() });
  });
  socket.addEventListener('close', () => {
    for (const listener of closeListeners) listener();
    const next = opened ? 0 : attempt + 1;
    const delay = retryDelay(next);
    const now = Date.now();
    const since = opened ? now : (lostAt ?? now);
    client.lost('the gateway connection closed');
    // Just dropped: reconnecting. A try that failed as well: the gateway is gone (until a try succeeds).
    connection.set({ kind: opened ? 'reconnecting' : 'gone', lostAt: since, nextTryAt: now + delay });
    setTimeout(() => connectWebSocket(client, connection, token, next, since), delay);
  });
}
