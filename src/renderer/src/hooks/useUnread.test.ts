import { describe, expect, it } from 'vitest';
import { markSeen, tabTitle, unreadCounts, unreadTotal } from './useUnread';

const SINCE = 1_000_000;
const session = (sessionId: string, messageCount: number, createdAt = SINCE - 1) => ({ sessionId, messageCount, createdAt });

describe('unread messages', () => {
  it('counts a conversation that began before the window first looked as read, and one that began later as unread from its first message', () => {
    const sessions = [session('old', 40), session('new', 3, SINCE + 5)];
    const marks = markSeen({}, sessions, null, SINCE);
    expect(marks).toEqual({ old: 40, new: 0 });
    expect(unreadCounts(marks, sessions, null)).toEqual(new Map([['new', 3]]));
  });

  it('counts what arrived since, except in the open conversation, which is read as messages arrive', () => {
    let marks = markSeen({}, [session('a', 2), session('b', 2)], 'a', SINCE);
    const later = [session('a', 4), session('b', 5)];
    marks = markSeen(marks, later, 'a', SINCE);
    const unread = unreadCounts(marks, later, 'a');
    expect(unread).toEqual(new Map([['b', 3]]));
    expect(unreadTotal(unread)).toBe(3);
  });

  it('returns the same marks when nothing changed, so nothing is saved again', () => {
    const sessions = [session('a', 2)];
    const marks = markSeen({}, sessions, null, SINCE);
    expect(markSeen(marks, sessions, null, SINCE)).toBe(marks);
  });

  it('says the count in the tab title, and nothing at zero', () => {
    expect(tabTitle(0)).toBe('Homing');
    expect(tabTitle(3)).toBe('(3) Homing');
    expect(tabTitle(12_345)).toBe('(999+) Homing');
  });
});
