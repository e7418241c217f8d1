import { useCallback, useEffect, useRef, useState } from 'react';
import type { DeliveryState, GatewayEvent, HomingApi, TranscriptMessage } from '../../shared/api';

interface ChatState {
  readonly sessionId: string | null;
  readonly messages: readonly TranscriptMessage[];
  /** Text streamed by the agent for the local turn in progress, and its session. */
  readonly streaming: string | null;
  readonly streamingSession: string | null;
  readonly deliveries: Readonly<Record<string, DeliveryState>>;
}

const EMPTY: ChatState = { sessionId: null, messages: [], streaming: null, streamingSession: null, deliveries: {} };

/** The app's own chat with the agent: the local conversation's transcript, live, and a composer. */
export function LocalChat({ api }: { api: HomingApi }) {
  const [chat, setChat] = useState<ChatState>(EMPTY);
  const [draft, setDraft] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const sessionRef = useRef<string | null>(null);
  const endRef = useRef<HTMLDivElement>(null);

  const load = useCallback(async () => {
    const list = await api.listSessions({ pageSize: 50 });
    if (!list.ok) return setError(list.error.message);
    const local = list.value.sessions.find((session) => session.platform === 'local' && session.current);
    if (!local) return;
    sessionRef.current = local.sessionId;
    const first = await api.getTranscript({ sessionId: local.sessionId, pageSize: 200 });
    if (!first.ok) return setError(first.error.message);
    let page = first.value;
    if (page.pageCount > 1) {
      const last = await api.getTranscript({ sessionId: local.sessionId, page: page.pageCount, pageSize: 200 });
      if (last.ok) page = last.value;
    }
    setChat((previous) => ({
      ...previous,
      sessionId: local.sessionId,
      messages: page.messages,
    }));
  }, [api]);

  useEffect(() => {
    void load();
    return api.subscribe((event: GatewayEvent) => {
      switch (event.type) {
        case 'session.updated':
          if (event.session.platform === 'local') void load();
          break;
        case 'turn.started':
          if (event.platform === 'local') setChat((previous) => ({ ...previous, streaming: '', streamingSession: event.sessionId }));
          break;
        case 'turn.token':
          setChat((previous) =>
            event.sessionId === previous.streamingSession ? { ...previous, streaming: (previous.streaming ?? '') + event.text } : previous,
          );
          break;
        case 'reply.recorded':
          setChat((previous) =>
            event.sessionId === previous.streamingSession ? { ...previous, streaming: null, streamingSession: null } : previous,
          );
          break;
        case 'delivery.changed':
          setChat((previous) => ({ ...previous, deliveries: { ...previous.deliveries, [event.delivery.id]: event.delivery.state } }));
          break;
        default:
          break;
      }
    });
  }, [api, load]);

  useEffect(() => {
    endRef.current?.scrollIntoView?.({ block: 'end' });
  }, [chat.messages.length, chat.streaming]);

  const send = async () => {
    const text = draft.trim();
    if (!text || sending) return;
    setSending(true);
    setError(null);
    const result = await api.sendLocalMessage({ text });
    setSending(false);
    if (!result.ok) return setError(result.error.message);
    setDraft('');
  };

  return (
    <section aria-labelledby="chat-title" className="card chat">
      <h2 id="chat-title">Local chat</h2>
      <div className="chat-log" role="log" aria-live="polite" data-testid="chat-log">
        {chat.messages.length === 0 && chat.streaming === null && (
          <p className="muted">Talk to your agent here. Replies are recorded before they are shown, like on any platform.</p>
        )}
        {chat.messages.map((message, index) => (
          <ChatBubble key={index} message={message} state={message.role === 'assistant' ? chat.deliveries[message.obligationId] : undefined} />
        ))}
        {chat.streaming !== null && (
          <div className="bubble bubble-assistant streaming" data-testid="chat-streaming">
            {chat.streaming || '…'}
          </div>
        )}
        <div ref={endRef} />
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <form
        className="composer"
        onSubmit={(event) => {
          event.preventDefault();
          void send();
        }}
      >
        <label htmlFor="composer-input" className="visually-hidden">
          Message to your agent
        </label>
        <textarea
          id="composer-input"
          value={draft}
          rows={2}
          placeholder="Message your agent (Enter to send, Shift+Enter for a new line)"
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.shiftKey) {
              event.preventDefault();
              void send();
            }
          }}
        />
        <button type="submit" disabled={sending || draft.trim() === ''}>
          Send
        </button>
      </form>
    </section>
  );
}

function ChatBubble({ message, state }: { message: TranscriptMessage; state: DeliveryState | undefined }) {
  if (message.role === 'user') {
    return (
      <div className="bubble bubble-user" data-testid="chat-user">
        {message.text}
      </div>
    );
  }
  return (
    <div className="bubble bubble-assistant" data-testid="chat-assistant">
      {message.text}
      {state && (
        <span className="tick" data-testid="delivery-tick" data-state={state}>
          {tickLabel(state)}
        </span>
      )}
    </div>
  );
}

function tickLabel(state: DeliveryState): string {
  switch (state) {
    case 'pending':
      return 'recorded';
    case 'attempting':
      return 'sending…';
    case 'delivered':
      return '✓ delivered';
    case 'failed':
      return 'failed, will retry';
    case 'abandoned':
      return 'not delivered';
  }
}
