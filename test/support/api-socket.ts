import WebSocket from 'ws';
import type { GatewayEvent, PlatformStatus, SessionPage, TranscriptPage } from '../../src/shared/api';
import { API_SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX } from '../../src/shared/headless-auth';
import type { RunningGateway } from './gateway-process';

/** The window's side of the API protocol over the headless gateway's WebSocket, for tests. */
export interface ApiSocket {
  /** One request; resolves with the value, throws with the error's message. */
  call<T = unknown>(method: string, params?: unknown): Promise<T>;
  /** Events since `subscribe` was called. */
  readonly events: GatewayEvent[];
  close(): void;
}

/**
 * Connects with the token as the window does (a subprotocol), or in the URL's
 * query, which non-browser clients may use.
 */
export async function connectApi(
  gateway: Pick<RunningGateway, 'port' | 'token'>,
  tokenIn: 'subprotocol' | 'query' = 'subprotocol',
): Promise<ApiSocket> {
  const api = `ws://127.0.0.1:${gateway.port}/api`;
  const socket =
    tokenIn === 'query'
      ? new WebSocket(`${api}?token=${gateway.token}`)
      : new WebSocket(api, [API_SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX + gateway.token]);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  let nextId = 1;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const events: GatewayEvent[] = [];
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as
      | { event: GatewayEvent }
      | { id: number; ok: true; value: unknown }
      | { id: number; ok: false; error: { code: string; message: string } };
    if ('event' in message) {
      events.push(message.event);
      return;
    }
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.ok) waiter?.resolve(message.value);
    else waiter?.reject(new Error(`${message.error.code}: ${message.error.message}`));
  });
  socket.on('close', () => {
    for (const waiter of pending.values()) waiter.reject(new Error('the API socket closed'));
    pending.clear();
  });
  return {
    events,
    call: <T>(method: string, params?: unknown) =>
      new Promise<T>((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        socket.send(JSON.stringify({ id, method, ...(params === undefined ? {} : { params }) }));
      }),
    close: () => socket.close(),
  };
}

/** Every user turn's text in every conversation the gateway lists, oldest first per conversation. */
export async function userTurns(api: Pick<ApiSocket, 'call'>): Promise<string[]> {
  const sessions = await api.call<SessionPage>('listSessions', {});
  const texts: string[] = [];
  for (const session of sessions.sessions) {
    const page = await api.call<TranscriptPage>('getTranscript', { sessionId: session.sessionId });
    texts.push(...page.messages.filter((message) => message.role === 'user').map((message) => message.text));
  }
  return texts;
}

/** Whether the gateway behind `api` says `platform` is connected (for `waitUntil`). */
export async function platformConnected(api: Pick<ApiSocket, 'call'>, platform: string): Promise<boolean> {
  return (await api.call<PlatformStatus[]>('listPlatforms')).some((entry) => entry.name === platform && entry.state === 'connected');
}
