import { useState } from 'react';
import type { SessionSummary } from '../../../../shared/api';
import { PlatformIcon } from '../../components/PlatformIcon';
import { ago } from '../../format';

interface ConversationListProps {
  readonly sessions: readonly SessionSummary[];
  /** Conversations being answered, with the agent that answers. */
  readonly live: ReadonlyMap<string, string | null>;
  /** Unread messages per conversation (none: absent). */
  readonly unread: ReadonlyMap<string, number>;
  readonly selected: string | null;
  readonly now: number;
  /** null: the local chat, before it has a session. */
  readonly onSelect: (sessionId: string | null) => void;
}

export function conversationTitle(session: SessionSummary): string {
  if (session.platform === 'local') return 'Local chat';
  return session.title ?? session.chat;
}

/** Conversations, newest first, with a live marker while the agent answers; searchable by title and last message. */
export function ConversationList({ sessions, live, unread, selected, now, onSelect }: ConversationListProps) {
  const [query, setQuery] = useState('');
  const needle = query.trim().toLowerCase();
  const shown = needle
    ? sessions.filter((session) => `${conversationTitle(session)} ${session.lastMessagePreview ?? ''}`.toLowerCase().includes(needle))
    : sessions;
  return (
    <div className="conversation-list">
      <label className="search">
        <span className="visually-hidden">Search conversations</span>
        <input id="conversation-search" type="search" placeholder="Search by title or text" value={query} onChange={(event) => setQuery(event.target.value)} />
      </label>
      <ul aria-label="Conversations">
        {!needle && !sessions.some((session) => session.platform === 'local') && (
          // The local chat is always one tap away, even before its first message.
          <li>
            <button type="button" className="conversation" aria-current={selected === null ? 'true' : undefined} onClick={() => onSelect(null)} data-testid="conversation">
              <PlatformIcon platform="local" />
              <span className="conversation-text">
                <span className="conversation-title">Local chat</span>
                <span className="conversation-preview">Talk to your agent here</span>
              </span>
            </button>
          </li>
        )}
          {shown.map((session) => (
            <li key={session.sessionId}>
              <button
                type="button"
                className="conversation"
                aria-current={session.sessionId === selected ? 'true' : undefined}
                onClick={() => onSelect(session.sessionId)}
                data-testid="conversation"
              >
                <PlatformIcon platform={session.platform} chatType={session.chatType} />
                <span className="conversation-text">
                  <span className="conversation-title">
                    {conversationTitle(session)}
                    {live.has(session.sessionId) && (
                      <span className="live" data-testid="live-marker" title={live.get(session.sessionId) ?? undefined}>
                        answering…
                        {live.get(session.sessionId) && <span className="live-agent"> {live.get(session.sessionId)}</span>}
                      </span>
                    )}
                  </span>
                  <span className="conversation-preview">{session.lastMessagePreview ?? ''}</span>
                </span>
                <span className="conversation-side">
                  <span className="conversation-time">{session.lastMessageAt ? ago(session.lastMessageAt, now) : ''}</span>
                  {(unread.get(session.sessionId) ?? 0) > 0 && (
                    <span className="unread" data-testid="unread" aria-label={`${unread.get(session.sessionId)} unread`}>
                      {unread.get(session.sessionId)! > 99 ? '99+' : unread.get(session.sessionId)}
                    </span>
                  )}
                </span>
              </button>
            </li>
          ))}
      </ul>
      {shown.length === 0 && needle && <p className="muted pad">No conversation matches “{query}”.</p>}
    </div>
  );
}
