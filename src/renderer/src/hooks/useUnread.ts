import { useEffect, useState } from 'react';
import type { SessionSummary } from '../../../shared/api';

const STORAGE_KEY = 'homing.read';
/** When this window (per origin) first read the conversation list: conversations that began later are new to the reader. */
const SINCE_KEY = 'homing.read.since';

/** How many messages of each conversation the reader has seen, by session id. */
export type ReadMarks = Readonly<Record<string, number>>;

type Listed = Pick<SessionSummary, 'sessionId' | 'messageCount' | 'createdAt'>;

/**
 * The marks after the reader looked at the list. A conversation seen for the
 * first time counts as read if it began before `since` (a fresh window does
 * not greet the reader with hundreds of old "unread" messages) and as unread
 * from its first message if it began later (someone new wrote while the window
 * was closed, or in the background). The open conversation is read as messages
 * arrive. The same object when nothing changed.
 */
export function markSeen(marks: ReadMarks, sessions: readonly Listed[], open: string | null, since: number): ReadMarks {
  let next: Record<string, number> | null = null;
  for (const session of sessions) {
    const seen = marks[session.sessionId];
    const wanted = session.sessionId === open ? session.messageCount : seen === undefined ? (session.createdAt > since ? 0 : session.messageCount) : seen;
    if (wanted !== seen) (next ??= { ...marks })[session.sessionId] = wanted;
  }
  return next ?? marks;
}

/** Unread messages per conversation (absent: none); the open one has none. */
export function unreadCounts(marks: ReadMarks, sessions: readonly Listed[], open: string | null): ReadonlyMap<string, number> {
  const unread = new Map<string, number>();
  for (const session of sessions) {
    const seen = marks[session.sessionId];
    if (seen !== undefined && session.messageCount > seen && session.sessionId !== open) unread.set(session.sessionId, session.messageCount - seen);
  }
  return unread;
}

export function unreadTotal(unread: ReadonlyMap<string, number>): number {
  let total = 0;
  for (const count of unread.values()) total += count;
  return total;
}

/** The tab's title: "(3) Homing" while messages wait unread, plain "Homing" at zero. */
export function tabTitle(unread: number): string {
  if (unread <= 0) return 'Homing';
  return `(${unread > 999 ? '999+' : unread}) Homing`;
}

function loadMarks(): ReadMarks {
  try {
    const parsed = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '{}') as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as ReadMarks) : {};
  } catch {
    return {};
  }
}

function saveMarks(marks: ReadMarks): void {
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(marks));
  } catch {
    // Storage switched off: unread counts last for this page only.
  }
}

function loadSince(): number {
  try {
    const stored = Number(localStorage.getItem(SINCE_KEY));
    if (Number.isFinite(stored) && stored > 0) return stored;
    const now = Date.now();
    localStorage.setItem(SINCE_KEY, String(now));
    return now;
  } catch {
    return Date.now();
  }
}

/**
 * Unread messages per conversation: those that arrived since the reader last
 * had it open (`open`: the conversation on screen, null when none is), kept
 * across reloads (per window origin).
 */
export function useUnread(sessions: readonly SessionSummary[], open: string | null): ReadonlyMap<string, number> {
  const [marks, setMarks] = useState<ReadMarks>(loadMarks);
  const [since] = useState(loadSince);
  useEffect(() => {
    const next = markSeen(marks, sessions, open, since);
    if (next === marks) return;
    setMarks(next);
    saveMarks(next);
  }, [sessions, open, marks, since]);
  return unreadCounts(marks, sessions, open);
}
