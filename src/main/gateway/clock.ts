/** Time is injected so tests move it forward instead of sleeping. */
export interface Clock {
  /** Wall-clock milliseconds since the epoch. */
  now(): number;
  /** Monotonic milliseconds; only differences are meaningful. */
  monotonic(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
};
