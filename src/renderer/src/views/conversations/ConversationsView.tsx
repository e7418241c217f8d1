import type { HomingApi } from '../../../../shared/api';
import { ErrorNote } from '../../components/ErrorNote';
import { useNow } from '../../hooks/useNow';
import { useSessions } from '../../hooks/useSessions';
import { useUnread } from '../../hooks/useUnread';
import { explainApiError } from '../../plain-words';
import { ConversationList } from './ConversationList';
import { Transcript } from './Transcript';

interface ConversationsViewProps {
  readonly api: HomingApi;
  /** The open conversation; null is the local chat. */
  readonly selected: string | null;
  /** On a narrow window, whether the transcript (not the list) is showing. */
  readonly showingTranscript: boolean;
  readonly onSelect: (sessionId: string | null) => void;
  readonly onBack: () => void;
}

/** The conversation list beside (or, when narrow, instead of) the open transcript. */
export function ConversationsView({ api, selected, showingTranscript, onSelect, onBack }: ConversationsViewProps) {
  const { sessions, live, error, more, loadMore } = useSessions(api);
  const now = useNow();
  const localSession = sessions.find((session) => session.platform === 'local') ?? null;
  const session = (selected ? sessions.find((candidate) => candidate.sessionId === selected) : localSession) ?? null;
  const isLocal = selected === null || session?.platform === 'local';
  // On a narrow window the open conversation is read only while its transcript shows.
  const narrow = typeof matchMedia === 'function' && matchMedia('(max-width: 640px)').matches;
  const unread = useUnread(sessions, narrow && !showingTranscript ? null : (session?.sessionId ?? null));
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
      <Transcript api={api} session={session} local={isLocal} onBack={onBack} />
    </section>
  );
}
