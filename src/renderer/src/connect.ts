import { ApiClient } from '../../shared/api-client';
import type { MessagePipe } from '../../shared/protocol';

/**
 * Builds `window.homing`. In Electron the preload hands over a MessagePort to the
 * gateway process (again after each gateway restart); in a browser the headless
 * server is reached over a WebSocket, reconnecting with backoff.
 */
export function connectHoming(): ApiClient {
  const client = new ApiClient();
  if (navigator.userAgent.includes('Electron/')) listenForPorts(client);
  else connectWebSocket(client, 0);
  return client;
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

function connectWebSocket(client: ApiClient, attempt: number): void {
  const token = new URLSearchParams(window.location.search).get('token');
  const url = new URL('api', window.location.href.replace(/^http/, 'ws'));
  url.search = token ? `?token=${encodeURIComponent(token)}` : '';
  const socket = new WebSocket(url);
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
    setTimeout(() => connectWebSocket(client, attempt + 1), delay);
  });
}
