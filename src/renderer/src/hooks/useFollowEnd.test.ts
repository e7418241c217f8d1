import { describe, expect, it } from 'vitest';
import { AT_END_PX, followsAfterScroll } from './useFollowEnd';

const at = (scrollTop: number, scrollHeight = 2_000, clientHeight = 500) => ({ scrollTop, scrollHeight, clientHeight });

describe('following the end of a scrolling box', () => {
  it('follows again once the reader is back at the end, or nearly', () => {
    expect(followsAfterScroll(false, 800, at(1_500))).toBe(true);
    expect(followsAfterScroll(false, 800, at(1_500 - AT_END_PX))).toBe(true);
  });

  it('stops following when the reader scrolls up', () => {
    expect(followsAfterScroll(true, 1_500, at(1_200))).toBe(false);
  });

  it('keeps following when text arrived between setting the position and its scroll event', () => {
    // Set to the end (1500), then a streamed paragraph made the content 300 px taller.
    expect(followsAfterScroll(true, 1_500, at(1_500, 2_300))).toBe(true);
  });

  it('does not start following when the reader scrolls down but stays short of the end', () => {
    expect(followsAfterScroll(false, 400, at(900))).toBe(false);
  });

  it('keeps following when the box grew and the position was clamped down to the end', () => {
    // The Stop row went away: the box is 60 px taller, and its end is 60 px higher.
    expect(followsAfterScroll(true, 1_500, at(1_440, 2_000, 560))).toBe(true);
  });
});
