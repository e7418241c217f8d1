import { useCallback, useEffect, useRef, useState } from 'react';
import type { ApiError, DeliveryRow, HomingApi, TranscriptMessage } from '../../../shared/api';
import { useOnReconnect } from '../connection';
import { useGatewayEvents } from './useGatewayEvents';

export interface TranscriptState {
  readonly messages: readonly TranscriptMessage[];
  /** The reply being generated right now, or null. */
  readonly streaming: string | null;
  /** The session whose turn is streaming here (what Stop cancels), or null. */
  readonly streamingSession: string | null;
  /** Which agent is answering (`openai · llama3.2, rule "work"`), when the gateway said. */
  readonly streamingAgent: string | null;
  /** Delivery rows behind the replies, by obligation id (the ticks). */
  readonly deliveries: ReadonlyMap<string, DeliveryRow>;
  /** Whether older messages exist than those shown. */
  readonly truncated: boolean;
  readonly error: ApiError | null;
}

const PAGE = 200;

/** One conversation's last 200 messages, the reply streaming in, and each reply's delivery state. */
export function useTranscript(api: HomingApi, sessionId: string | null, followLocal = false): TranscriptState {
  const [messages, setMessages] = useState<readonly TranscriptMessage[]>([]);
  const [streaming, setStreaming] = useState<string | null>(null);
  const [streamingSession, setStreamingSession] = useState<string | null>(null);
  const [streamingAgent, setStreamingAgent] = useState<string | null>(null);
  const [deliveries, setDeliveries] = useState<ReadonlyMap<string, DeliveryRow>>(new Map());
  const [truncated, setTruncated] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  /** The session whose reply is streaming here (the local chat's first one may start before its session is listed). */
  const streamingIn = useRef<string | null>(null);

  /** Counts loads: only the newest may fill the view, so a conversation left behind (or an overtaken read) never shows up in another. */
  const loads = useRef(0);
  const latest = useRef<Promise<void>>(Promise.resolve());

  const load = useCallback((): Promise<void> => {
    if (!sessionId) return Promise.resolve();
    const mine = ++loads.current;
    const run = async (): Promise<void> => {
      let page = await api.getTranscript({ sessionId, pageSize: PAGE });
      let before: readonly TranscriptMessage[] = [];
      if (page.ok && page.value.pageCount > 1) {
        const lastPage = page.value.pageCount;
        page = await api.getTranscript({ sessionId, page: lastPage, pageSize: PAGE });
        // The last page may hold a single message: the one before it too, so the view never shrinks to a few lines.
        if (page.ok && page.value.messages.length < PAGE) {
          const previous = await api.getTranscript({ sessionId, page: lastPage - 1, pageSize: PAGE });
          if (previous.ok) before = previous.value.messages;
        }
      }
      // Overtaken: settle when the newest load has filled the view instead.
      if (mine !== loads.current) return latest.current;
      if (!page.ok) return setError(page.error);
      setError(null);
      setMessages(before.length > 0 ? [...before, ...page.value.messages] : page.value.messages);
      setTruncated(page.value.pageCount > (before.length > 0 ? 2 : 1));
      const ids = page.value.messages.flatMap((message) => (message.role === 'assistant' ? [message.obligationId] : [])).slice(-500);
      if (ids.length === 0) return;
      // Not awaited: the caller swaps the streamed text for the stored message in the same render.
      void api.getDeliveries({ ids }).then((rows) => {
        if (rows.ok && mine === loads.current) setDeliveries((previous) => new Map([...previous, ...rows.value.map((row) => [row.id, row] as const)]));
      });
    };
    latest.current = run();
    return latest.current;
  }, [api, sessionId]);

  useEffect(() => {
    setMessages([]);
    if (streamingIn.current !== sessionId) {
      streamingIn.current = null;
      setStreaming(null);
      setStreamingSession(null);
    }
    setDeliveries(new Map());
    void load();
  }, [load]);

  useOnReconnect(() => void load());

  useGatewayEvents(api, (event) => {
    switch (event.type) {
      case 'session.updated':
        if (event.session.sessionId === sessionId) void load();
        return;
      case 'turn.started':
        if (event.sessionId === sessionId || (sessionId === null && followLocal && event.platform === 'local')) {
          streamingIn.current = event.sessionId;
          setStreamingSession(event.sessionId);
          setStreamingAgent(event.agent ?? null);
          setStreaming('');
        }
        return;
      case 'turn.token':
        if (event.sessionId === streamingIn.current) setStreaming((previous) => (previous ?? '') + event.text);
        return;
      case 'reply.recorded':
      case 'turn.finished':
        // The streamed text stays until the stored reply replaces it: no flash, no jump.
        if (event.sessionId === streamingIn.current) {
          void load().then(() => {
            streamingIn.current = null;
            setStreaming(null);
            setStreamingSession(null);
          });
        }
        return;
      case 'delivery.changed':
        setDeliveries((previous) => new Map(previous).set(event.delivery.id, event.delivery));
        return;
      default:
        return;
    }
  });
  return { messages, streaming, streamingSession, streamingAgent, deliveries, truncated, error };
}
