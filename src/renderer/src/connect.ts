import { ApiClient } from '../../shared/api-client';
import { API_SUBPROTOCOL, TOKEN_STORAGE_KEY, TOKEN_SUBPROTOCOL_PREFIX } from '../../shared/headless-auth';
import type { MessagePipe } from '../../shared/protocol';

/**
 * Builds `window.homing`. In Electron the preload hands over a MessagePort to the
 * gateway process (again after each gateway restart); in a browser the headless
 * server is reached over a WebSocket, reconnecting with backoff.
 */
export function connectHoming(): ApiClient {
  const client = new ApiClient();
  if (navigator.userAgent.includes('Electron/')) {
    listenForPorts(client);
    return client;
  }
  const token = takeToken();
  if (token) connectWebSocket(client, token, 0);
  else client.refuse('this window has no access token: open the URL that `homing url` prints');
  return client;
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

function listenForPorts(client: ApiClient): void {
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
    client.attach(pipe);
    port.start();
  });
}

function connectWebSocket(client: ApiClient, token: string, attempt: number): void {
  const url = new URL('api', window.location.href.replace(/^http/, 'ws'));
  url.search = '';
  url.hash = '';
  // The token rides as a subprotocol: not in the URL (logs, devtools), not in a cookie.
  const socket = new WebSocket(url, [API_SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX + token]);
  let opened = false;
  const closeListeners: (() => void)[] = [];
  socket.addEventListener('open', () => {
    opened = true;
    attempt = 0;
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
  });
  socket.addEventListener('close', () => {
    for (const listener of closeListeners) listener();
    const delay = Math.min(10_000, 250 * 2 ** (opened ? 0 : attempt));
    setTimeout(() => connectWebSocket(client, token, attempt + 1), delay);
  });
}
