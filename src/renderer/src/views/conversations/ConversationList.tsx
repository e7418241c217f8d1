import { useState } from 'react';
import type { SessionSummary } from '../../../../shared/api';
import { PlatformIcon } from '../../components/PlatformIcon';
import { ago } from '../../format';

interface ConversationListProps {
  readonly sessions: readonly SessionSummary[];
  readonly live: ReadonlySet<string>;
  readonly selected: string | null;
  readonly now: number;
  readonly onSelect: (sessionId: string) => void;
}

export function conversationTitle(session: SessionSummary): string {
  if (session.platform === 'local') return 'Local chat';
  return session.title ?? session.chat;
}

/** Conversations, newest first, with a live marker while the agent answers; searchable by title and last message. */
export function ConversationList({ sessions, live, selected, now, onSelect }: ConversationListProps) {
  const [query, setQuery] = useState('');
  const needle = query.trim().toLowerCase();
  const shown = needle
    ? sessions.filter((session) => `${conversationTitle(session)} ${session.lastMessagePreview ?? ''}`.toLowerCase().includes(needle))
    : sessions;
  return (
    <div className="conversation-list">
      <label className="search">
        <span className="visually-hidden">Search conversations</span>
        <input type="search" placeholder="Search by title or text" value={query} onChange={(event) => setQuery(event.target.value)} />
      </label>
      {shown.length === 0 ? (
        <p className="muted pad">{needle ? `No conversation matches “${query}”.` : 'No conversations yet. Say hello in the local chat.'}</p>
      ) : (
        <ul aria-label="Conversations">
          {shown.map((session) => (
            <li key={session.sessionId}>
              <button
                type="button"
                className="conversation"
                aria-current={session.sessionId === selected ? 'true' : undefined}
                onClick={() => onSelect(session.sessionId)}
                data-testid="conversation"
              >
                <PlatformIcon platform={session.platform} />
                <span className="conversation-text">
                  <span className="conversation-title">
                    {conversationTitle(session)}
                    {live.has(session.sessionId) && (
                      <span className="live" data-testid="live-marker">
                        answering…
                      </span>
                    )}
                  </span>
                  <span className="conversation-preview">{session.lastMessagePreview ?? ''}</span>
                </span>
                <span className="conversation-time">{session.lastMessageAt ? ago(session.lastMessageAt, now) : ''}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
