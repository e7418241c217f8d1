import { useCallback, useEffect, useRef } from 'react';

/**
 * A trigger that runs `run` once, `ms` after the first call of a burst: a
 * thousand events cost one read. The latest `run` is the one that runs; a
 * pending run is dropped when the component goes away.
 */
export function useCoalesced(run: () => void, ms: number): () => void {
  const latest = useRef(run);
  latest.current = run;
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      latest.current();
    }, ms);
  }, [ms]);
}
