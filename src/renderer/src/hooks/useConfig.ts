import { useCallback, useEffect } from 'react';
import type { ApiError, ConfigView, HomingApi } from '../../../shared/api';
import { useApiRead } from './useApiRead';
import { useGatewayEvents } from './useGatewayEvents';

/** config.json as in force, re-read when it changes (from the window, an editor, or another process). */
export function useConfig(api: HomingApi): { view: ConfigView | null; error: ApiError | null; reload: () => void } {
  const { value: view, error, load: reload } = useApiRead(useCallback(() => api.getConfig(), [api]), 'config');
  useEffect(reload, [reload]);
  useGatewayEvents(api, (event) => {
    if (event.type === 'config.changed') reload();
  });
  return { view, error, reload };
}
