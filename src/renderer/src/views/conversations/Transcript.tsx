import { memo, useEffect, useRef } from 'react';
import type { DeliveryRow, HomingApi, SessionSummary, TranscriptMessage } from '../../../../shared/api';
import { ErrorNote } from '../../components/ErrorNote';
import { PlatformIcon } from '../../components/PlatformIcon';
import { clockTime } from '../../format';
import { useTranscript } from '../../hooks/useTranscript';
import { explainApiError } from '../../plain-words';
import { Composer } from './Composer';
import { conversationTitle } from './ConversationList';
import { DeliveryTick } from './DeliveryTick';

interface TranscriptProps {
  readonly api: HomingApi;
  readonly session: SessionSummary | null;
  /** The local chat has a composer even before its first message. */
  readonly local: boolean;
  readonly onBack: () => void;
}

interface MessagesProps {
  readonly messages: readonly TranscriptMessage[];
  readonly deliveries: ReadonlyMap<string, DeliveryRow>;
  readonly showSenders: boolean;
}

/** The stored messages: memoized, so a streamed token re-renders only the streaming bubble. */
const Messages = memo(function Messages({ messages, deliveries, showSenders }: MessagesProps) {
  return messages.map((message, index) =>
    message.role === 'user' ? (
      <div key={index} className="bubble bubble-user" data-testid="chat-user">
        {showSenders && message.sender.name && <span className="sender">{message.sender.name}</span>}
        <span className="text">{message.text}</span>
        <span className="time">{clockTime(message.at)}</span>
      </div>
    ) : (
      <div key={index} className="bubble bubble-assistant" data-testid="chat-assistant">
        <span className="text">{message.text}</span>
        <span className="time">
          {clockTime(message.at)} <DeliveryTick row={deliveries.get(message.obligationId)} />
        </span>
      </div>
    ),
  );
});

/** One conversation: messages, the reply streaming in, delivery ticks, and (local chat) the composer. */
export function Transcript({ api, session, local, onBack }: TranscriptProps) {
  const state = useTranscript(api, session?.sessionId ?? null, local);
  const logRef = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  // Follow the end while the reader is at the end; never yank them back while they read older messages.
  useEffect(() => {
    const log = logRef.current;
    if (log && stick.current) log.scrollTop = log.scrollHeight;
  }, [state.messages.length, state.streaming]);

  const title = session ? conversationTitle(session) : 'Local chat';
  return (
    <section className="transcript" aria-labelledby="transcript-title">
      <header className="transcript-head">
        <button type="button" className="back" onClick={onBack} aria-label="Back to conversations">
          ←
        </button>
        <PlatformIcon platform={session?.platform ?? 'local'} />
        <h3 id="transcript-title">{title}</h3>
      </header>
      <ErrorNote message={state.error && explainApiError('load this conversation', state.error)} />
      <div
        ref={logRef}
        className="chat-log"
        role="log"
        aria-live="polite"
        aria-label={`Messages in ${title}`}
        tabIndex={0}
        data-testid="chat-log"
        onScroll={(event) => {
          const log = event.currentTarget;
          stick.current = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
        }}
      >
        {state.truncated && <p className="muted center">Older messages are not shown.</p>}
        {state.messages.length === 0 && state.streaming === null && (
          <p className="muted center">{local ? 'Talk to your agent here. Replies are recorded before they are shown, like on any platform.' : 'No messages.'}</p>
        )}
        <Messages messages={state.messages} deliveries={state.deliveries} showSenders={session?.chatType !== 'direct'} />
        {state.streaming !== null && (
          <div className="bubble bubble-assistant streaming" data-testid="chat-streaming" aria-busy="true">
            <span className="text">{state.streaming || '…'}</span>
          </div>
        )}
      </div>
      {local && <Composer api={api} />}
    </section>
  );
}
