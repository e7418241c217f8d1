import { useCallback, useLayoutEffect, useRef, useState, type RefObject } from 'react';

/** This close to the end counts as at the end: a wheel notch short of it still follows. */
export const AT_END_PX = 24;

export interface ScrollMetrics {
  readonly scrollTop: number;
  readonly scrollHeight: number;
  readonly clientHeight: number;
}

export function distanceToEnd(metrics: ScrollMetrics): number {
  return metrics.scrollHeight - metrics.scrollTop - metrics.clientHeight;
}

/**
 * Whether the view still follows the end after one scroll event. Only the
 * reader moves the view up: content growing below never lowers `scrollTop`,
 * and a view that got taller (or content that shrank) clamps it to the end. So
 * reaching the end follows again, moving up stops following, and anything else
 * (a scroll event that lands after more text arrived) changes nothing.
 */
export function followsAfterScroll(following: boolean, previousTop: number, metrics: ScrollMetrics): boolean {
  if (distanceToEnd(metrics) <= AT_END_PX) return true;
  if (metrics.scrollTop < previousTop - 1) return false;
  return following;
}

export interface FollowEnd {
  /** The scrolling box. */
  readonly scrollRef: RefObject<HTMLDivElement | null>;
  /** Everything inside it, in one element: its size changes whenever the content does. */
  readonly contentRef: RefObject<HTMLDivElement | null>;
  /** Whether the view keeps the newest content in sight (false: the reader scrolled up to older content). */
  readonly following: boolean;
  readonly onScroll: () => void;
  /** Shows the newest content and follows it again. */
  readonly jumpToEnd: () => void;
}

/**
 * A scrolling box that opens at its end and stays there as content grows (a
 * message arrives, a streamed reply gets longer, the box gets shorter), unless
 * the reader scrolled up; scrolling back to the end follows again. `openKey`:
 * when it changes (another conversation), the box opens at its end again. A box
 * that was hidden (a narrow window shows the list instead) opens at its end
 * when shown: the browser forgets a hidden box's position anyway.
 */
export function useFollowEnd(openKey: unknown): FollowEnd {
  const scrollRef = useRef<HTMLDivElement | null>(null);
  const contentRef = useRef<HTMLDivElement | null>(null);
  const followingRef = useRef(true);
  const [following, setFollowingState] = useState(true);
  /** `scrollTop` as last seen or set here, to tell the reader's upward scroll from content arriving. */
  const lastTop = useRef(0);

  const setFollowing = useCallback((value: boolean) => {
    followingRef.current = value;
    setFollowingState(value);
  }, []);

  const toEnd = useCallback(() => {
    const element = scrollRef.current;
    if (!element) return;
    element.scrollTop = element.scrollHeight;
    lastTop.current = element.scrollTop;
  }, []);

  /**
   * After content changed: to the end while following. The reader may have
   * scrolled up a moment ago, before that scroll's event arrived: then they
   * stop following here, instead of being pulled back (a smooth scroll cut off
   * by every streamed word).
   */
  const keepUp = useCallback(() => {
    const element = scrollRef.current;
    if (!element || !followingRef.current || element.clientHeight === 0) return;
    if (element.scrollTop < lastTop.current - 1 && distanceToEnd(element) > AT_END_PX) {
      lastTop.current = element.scrollTop;
      setFollowing(false);
      return;
    }
    toEnd();
  }, [setFollowing, toEnd]);

  const onScroll = useCallback(() => {
    const element = scrollRef.current;
    if (!element || element.clientHeight === 0) return;
    const next = followsAfterScroll(followingRef.current, lastTop.current, element);
    lastTop.current = element.scrollTop;
    if (next !== followingRef.current) setFollowing(next);
  }, [setFollowing]);

  const jumpToEnd = useCallback(() => {
    setFollowing(true);
    toEnd();
  }, [setFollowing, toEnd]);

  // Another conversation opens at its newest message.
  useLayoutEffect(() => {
    setFollowing(true);
    toEnd();
  }, [openKey, setFollowing, toEnd]);

  // After every render of the owner (a message, a streamed token): in the same frame, no flash of the old position.
  useLayoutEffect(keepUp);

  // Growth the owner does not render (a code block laid out, the box resized by what is around it), and the box shown again.
  useLayoutEffect(() => {
    const element = scrollRef.current;
    const content = contentRef.current;
    if (!element || typeof ResizeObserver === 'undefined') return;
    let hidden = element.clientHeight === 0;
    const observer = new ResizeObserver(() => {
      const nowHidden = element.clientHeight === 0;
      const shown = hidden && !nowHidden;
      hidden = nowHidden;
      // A hidden box's position is gone (0 when shown again): not the reader scrolling up.
      if (nowHidden) lastTop.current = 0;
      else if (shown) jumpToEnd();
      else keepUp();
    });
    observer.observe(element);
    if (content) observer.observe(content);
    return () => observer.disconnect();
  }, [jumpToEnd, keepUp]);

  return { scrollRef, contentRef, following, onScroll, jumpToEnd };
}
