import { useCallback, useEffect, useState } from 'react';
import type { ApiError, ConfigView, HomingApi } from '../../../shared/api';
import { useGatewayEvents } from './useGatewayEvents';

/** config.json as in force, re-read when it changes (from the window, an editor, or another process). */
export function useConfig(api: HomingApi): { view: ConfigView | null; error: ApiError | null; reload: () => void } {
  const [view, setView] = useState<ConfigView | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const reload = useCallback(() => {
    void api.getConfig().then((result) => {
      if (result.ok) {
        setView(result.value);
        setError(null);
      } else setError(result.error);
    });
  }, [api]);
  useEffect(reload, [reload]);
  useGatewayEvents(api, (event) => {
    if (event.type === 'config.changed') reload();
  });
  return { view, error, reload };
}
