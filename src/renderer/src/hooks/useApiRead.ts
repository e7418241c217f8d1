import { useCallback, useState } from 'react';
import type { ApiError, ApiResult } from '../../../shared/api';
import { useOnReconnect } from '../connection';

/**
 * What each read last returned, by its cache key, for the window's lifetime: a
 * view opened while the gateway is away shows what it last knew (marked as
 * such by the header) instead of an empty "nothing yet".
 */
const lastKnown = new Map<string, unknown>();

/**
 * The latest answer of one API read and its error; `load` reads again. An
 * error keeps the last good value on screen (and a later good read clears it).
 * `read` must be stable (useCallback), as `load` is built from it. It is read
 * again by itself when the connection comes back.
 */
export function useApiRead<T>(read: () => Promise<ApiResult<T>>, cacheKey?: string): { value: T | null; error: ApiError | null; load: () => void } {
  const [value, setValue] = useState<T | null>(() => (cacheKey ? ((lastKnown.get(cacheKey) as T | undefined) ?? null) : null));
  const [error, setError] = useState<ApiError | null>(null);
  const load = useCallback(() => {
    void read().then((result) => {
      if (!result.ok) return setError(result.error);
      if (cacheKey) lastKnown.set(cacheKey, result.value);
      setValue(result.value);
      setError(null);
    });
  }, [read, cacheKey]);
  useOnReconnect(load);
  return { value, error, load };
}
