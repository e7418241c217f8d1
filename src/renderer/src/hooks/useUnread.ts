import { useEffect, useState } from 'react';
import type { SessionSummary } from '../../../shared/api';

const STORAGE_KEY = 'homing.read';

/** How many messages of each conversation the reader has seen, kept across reloads (per window origin). */
function loadMarks(): Record<string, number> {
  try {
    const parsed = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '{}') as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, number>) : {};
  } catch {
    return {};
  }
}

function saveMarks(marks: Record<string, number>): void {
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(marks));
  } catch {
    // Storage switched off: unread counts last for this page only.
  }
}

/**
 * Unread messages per conversation: those that arrived since the reader last
 * had it open. A conversation seen for the first time counts as read (a fresh
 * window does not greet the reader with hundreds of old "unread" messages);
 * the open one is read as messages arrive.
 */
export function useUnread(sessions: readonly SessionSummary[], open: string | null): ReadonlyMap<string, number> {
  const [marks, setMarks] = useState<Record<string, number>>(loadMarks);
  useEffect(() => {
    let changed = false;
    const next = { ...marks };
    for (const session of sessions) {
      if (next[session.sessionId] === undefined || (session.sessionId === open && next[session.sessionId] !== session.messageCount)) {
        next[session.sessionId] = session.messageCount;
        changed = true;
      }
    }
    if (!changed) return;
    setMarks(next);
    saveMarks(next);
  }, [sessions, open, marks]);
  const unread = new Map<string, number>();
  for (const session of sessions) {
    const seen = marks[session.sessionId];
    if (seen !== undefined && session.messageCount > seen && session.sessionId !== open) unread.set(session.sessionId, session.messageCount - seen);
  }
  return unread;
}
