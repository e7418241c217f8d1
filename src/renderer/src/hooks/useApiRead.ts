import { useCallback, useState } from 'react';
import type { ApiError, ApiResult } from '../../../shared/api';

/**
 * The latest answer of one API read and its error; `load` reads again. An
 * error keeps the last good value on screen (and a later good read clears it).
 * `read` must be stable (useCallback), as `load` is built from it.
 */
export function useApiRead<T>(read: () => Promise<ApiResult<T>>): { value: T | null; error: ApiError | null; load: () => void } {
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const load = useCallback(() => {
    void read().then((result) => {
      if (!result.ok) return setError(result.error);
      setValue(result.value);
      setError(null);
    });
  }, [read]);
  return { value, error, load };
}
