import type { HomingApi, SessionSummary } from '../../../../shared/api';
import { ErrorNote } from '../../components/ErrorNote';
import { useNow } from '../../hooks/useNow';
import type { SessionsState } from '../../hooks/useSessions';
import { explainApiError } from '../../plain-words';
import { ConversationList } from './ConversationList';
import { Transcript } from './Transcript';

interface ConversationsViewProps {
  readonly api: HomingApi;
  /** The list, read by the window (the tab's title counts unread messages in every view). */
  readonly list: SessionsState;
  readonly unread: ReadonlyMap<string, number>;
  /** The open conversation as listed (null: the local chat before its first message, or one not listed). */
  readonly session: SessionSummary | null;
  /** Whether the open conversation is the local chat (it has the composer). */
  readonly local: boolean;
  /** On a narrow window, whether the transcript (not the list) is showing. */
  readonly showingTranscript: boolean;
  readonly onSelect: (sessionId: string | null) => void;
  readonly onBack: () => void;
  /** The open conversation's platform, while it is not connected (its label). */
  readonly waitingFor?: string | undefined;
}

/** The conversation list beside (or, when narrow, instead of) the open transcript. */
export function ConversationsView({ api, list, unread, session, local, showingTranscript, onSelect, onBack, waitingFor }: ConversationsViewProps) {
  const { sessions, live, error, more, loadMore } = list;
  const now = useNow();
  return (
    <section className={`view conversations${showingTranscript ? ' show-transcript' : ''}`} aria-labelledby="conversations-title">
      <h2 id="conversations-title" className="visually-hidden">
        Conversations
      </h2>
      <div className="conversation-pane">
        <ErrorNote message={error && explainApiError('load the conversations', error)} />
        <ConversationList sessions={sessions} live={live} unread={unread} selected={session?.sessionId ?? null} now={now} onSelect={onSelect} />
        {more && (
          <button type="button" className="load-more" onClick={loadMore} data-testid="older-conversations">
            Show older conversations
          </button>
        )}
      </div>
      <Transcript api={api} session={session} local={local} onBack={onBack} waitingFor={waitingFor} />
    </section>
  );
}
