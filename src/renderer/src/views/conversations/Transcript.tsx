import { memo, useCallback, useEffect, useState } from 'react';
import type { DeliveryRow, HomingApi, SessionSummary, TranscriptMessage } from '../../../../shared/api';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ErrorNote } from '../../components/ErrorNote';
import { MediaItems } from '../../components/MediaItems';
import { PlatformIcon } from '../../components/PlatformIcon';
import { useOnline } from '../../connection';
import { clockTime, dayLabel, sameDay } from '../../format';
import { useAttachments } from '../../hooks/useAttachments';
import { useFileDrop } from '../../hooks/useFileDrop';
import { useFollowEnd } from '../../hooks/useFollowEnd';
import { useTranscript } from '../../hooks/useTranscript';
import { Markdown } from '../../markdown';
import { deliveryKind, explainApiError } from '../../plain-words';
import { Composer } from './Composer';
import { conversationTitle } from './ConversationList';
import { DeliveryTick } from './DeliveryTick';

interface TranscriptProps {
  readonly api: HomingApi;
  readonly session: SessionSummary | null;
  /** The local chat has a composer even before its first message. */
  readonly local: boolean;
  readonly onBack: () => void;
  /** The conversation's platform, while it is not connected (its label). */
  readonly waitingFor?: string | undefined;
}

type ReplyAction = (action: 'retry' | 'discard', row: DeliveryRow) => void;

interface MessagesProps {
  readonly api: HomingApi;
  /** The conversation the messages' files belong to. */
  readonly sessionId: string | null;
  readonly messages: readonly TranscriptMessage[];
  readonly deliveries: ReadonlyMap<string, DeliveryRow>;
  readonly showSenders: boolean;
  readonly online: boolean;
  readonly onReplyAction: ReplyAction;
  /** The conversation's platform is not connected (its label): a reply being sent is waiting for it. */
  readonly waitingFor?: string | undefined;
}

/** A failed reply can be retried or discarded right where it is read. */
function ReplyActions({ row, online, onAction }: { row: DeliveryRow | undefined; online: boolean; onAction: ReplyAction }) {
  if (!row) return null;
  const kind = deliveryKind(row);
  if (kind !== 'retrying' && kind !== 'needs-you' && kind !== 'given-up') return null;
  return (
    <span className="reply-actions">
      <button type="button" disabled={!online} onClick={() => onAction('retry', row)} data-testid="reply-retry">
        Retry
      </button>
      {kind !== 'given-up' && (
        <button type="button" disabled={!online} onClick={() => onAction('discard', row)} data-testid="reply-discard">
          Discard
        </button>
      )}
    </span>
  );
}

/** The stored messages, with a line where the day changes: memoized, so a streamed token re-renders only the streaming bubble. */
const Messages = memo(function Messages({ api, sessionId, messages, deliveries, showSenders, online, onReplyAction, waitingFor }: MessagesProps) {
  const now = Date.now();
  return messages.map((message, index) => {
    const previous = messages[index - 1];
    const separator =
      !previous || !sameDay(previous.at, message.at) ? (
        <p className="day-separator" role="separator" data-testid="day-separator">
          <span>{dayLabel(message.at, now)}</span>
        </p>
      ) : null;
    const bubble =
      message.role === 'summary' ? (
        <div className="bubble bubble-summary" data-testid="chat-summary">
          <span className="sender">{summaryLine(message)}</span>
          <Markdown text={message.text} />
          <span className="time">{clockTime(message.at)}</span>
        </div>
      ) : message.role === 'user' ? (
        <div className={message.scheduled ? 'bubble bubble-user bubble-scheduled' : 'bubble bubble-user'} data-testid="chat-user">
          {message.scheduled ? (
            <span className="sender" data-testid="chat-scheduled">
              ⏰ Schedule “{message.scheduled.name}” · {message.scheduled.when}
            </span>
          ) : (
            showSenders && message.sender.name && <span className="sender">{message.sender.name}</span>
          )}
          {message.text !== '' && <span className="text">{message.text}</span>}
          {sessionId && message.media && message.media.length > 0 && <MediaItems api={api} sessionId={sessionId} media={message.media} />}
          <span className="time">{clockTime(message.at)}</span>
        </div>
      ) : (
        <div className="bubble bubble-assistant" data-testid="chat-assistant">
          <Markdown text={message.text} />
          <span className="time">
            {clockTime(message.at)} <DeliveryTick row={deliveries.get(message.obligationId)} waitingFor={waitingFor} />
            <ReplyActions row={deliveries.get(message.obligationId)} online={online} onAction={onReplyAction} />
          </span>
        </div>
      );
    return (
      <div key={index} className="message">
        {separator}
        {bubble}
      </div>
    );
  });
});

/** One conversation: messages, the reply streaming in (with Stop), delivery ticks, and (local chat) the composer. */
export function Transcript({ api, session, local, onBack, waitingFor }: TranscriptProps) {
  const state = useTranscript(api, session?.sessionId ?? null, local);
  const online = useOnline();
  // Opens at the newest message and follows new ones; never yanks the reader back while they read older ones.
  const follow = useFollowEnd(session?.sessionId ?? 'local');
  const [note, setNote] = useState<string | null>(null);
  const [discarding, setDiscarding] = useState<DeliveryRow | null>(null);
  const [stopping, setStopping] = useState(false);
  const attachments = useAttachments(api);
  // Files dropped anywhere on the local chat join the next message.
  const drop = useFileDrop(attachments.add, local);

  useEffect(() => setStopping(false), [state.streamingSession]);

  const stop = async () => {
    if (!state.streamingSession) return;
    setStopping(true);
    const result = await api.cancelTurn({ sessionId: state.streamingSession });
    if (!result.ok) {
      setStopping(false);
      setNote(explainApiError('stop the answer', result.error));
    }
  };

  // Stable, so the memoized messages do not re-render for every streamed token.
  const onReplyAction = useCallback<ReplyAction>(
    (action, row) => {
      if (action === 'discard') return setDiscarding(row);
      void api.retryDelivery({ id: row.id }).then((result) => setNote(result.ok ? null : explainApiError('retry the reply', result.error)));
    },
    [api],
  );

  const title = session ? conversationTitle(session) : 'Local chat';
  return (
    <section className={drop.over && local ? 'transcript dropping' : 'transcript'} aria-labelledby="transcript-title" {...(local ? drop.handlers : {})}>
      <header className="transcript-head">
        <button type="button" className="back" onClick={onBack} aria-label="Back to conversations">
          ←
        </button>
        <PlatformIcon platform={session?.platform ?? 'local'} chatType={session?.chatType} />
        <h3 id="transcript-title">{title}</h3>
      </header>
      <ErrorNote message={state.error && explainApiError('load this conversation', state.error)} />
      <ErrorNote message={note} />
      <div className="chat-frame">
        <div
          ref={follow.scrollRef}
          className="chat-log"
          role="log"
          aria-live="polite"
          aria-label={`Messages in ${title}`}
          tabIndex={0}
          data-testid="chat-log"
          onScroll={follow.onScroll}
        >
          <div ref={follow.contentRef} className="chat-log-content">
            {state.truncated && <p className="muted center">Older messages are not shown.</p>}
            {state.messages.length === 0 && state.streaming === null && (
              <p className="muted center">{local ? 'Talk to your agent here. Replies are recorded before they are shown, like on any platform.' : 'No messages.'}</p>
            )}
            <Messages
              api={api}
              sessionId={session?.sessionId ?? null}
              messages={state.messages}
              deliveries={state.deliveries}
              showSenders={session?.chatType !== 'direct'}
              online={online}
              onReplyAction={onReplyAction}
              waitingFor={waitingFor}
            />
            {state.streaming !== null && (
              <div className="bubble bubble-assistant streaming" data-testid="chat-streaming" aria-busy="true">
                {state.streaming ? <Markdown text={state.streaming} /> : <span className="text">…</span>}
              </div>
            )}
          </div>
        </div>
        {!follow.following && (
          <button
            type="button"
            className="jump-newest"
            aria-label="Scroll to the newest message"
            data-testid="jump-newest"
            onClick={() => {
              follow.jumpToEnd();
              // The button goes away: keep a keyboard reader in the messages, not lost on the page.
              follow.scrollRef.current?.focus({ preventScroll: true });
            }}
          >
            Newest ↓
          </button>
        )}
      </div>
      {state.streaming !== null && state.streamingSession && (
        <div className="stop-row">
          <span className="muted" data-testid="answering-agent">
            {state.streamingAgent ? `${state.streamingAgent} is answering…` : 'The agent is answering…'}
          </span>
          <button type="button" onClick={() => void stop()} disabled={stopping || !online} data-testid="stop-turn">
            {stopping ? 'Stopping…' : 'Stop'}
          </button>
        </div>
      )}
      {local && <Composer api={api} attachments={attachments} />}
      {local && drop.over && (
        <p className="drop-hint" aria-hidden="true">
          Drop files to send them with your next message
        </p>
      )}
      {discarding && (
        <ConfirmDialog
          title="Discard this reply?"
          body="It will never be sent. It stays in this conversation's transcript."
          confirmLabel="Discard"
          onCancel={() => setDiscarding(null)}
          onConfirm={() => {
            const row = discarding;
            setDiscarding(null);
            void api.discardDelivery({ id: row.id }).then((result) => setNote(result.ok ? null : explainApiError('discard the reply', result.error)));
          }}
        />
      )}
    </section>
  );
}

/** What a summary stands for, and what was lost on the way: `Summary of 7 earlier messages (the agent sees this instead of them; 1 of them was cut to fit first)`. */
function summaryLine(summary: Extract<TranscriptMessage, { role: 'summary' }>): string {
  const notes = ['the agent sees this instead of them'];
  if (summary.cut) notes.push(`${summary.cut === 1 ? '1 of them was' : `${summary.cut} of them were`} cut to fit first`);
  if (summary.trimmed) notes.push('its end was cut to fit');
  return `Summary of ${summary.covers} earlier message${summary.covers === 1 ? '' : 's'} (${notes.join('; ')})`;
}
