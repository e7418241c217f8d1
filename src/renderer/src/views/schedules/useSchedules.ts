import { useCallback, useEffect, useRef, useState } from 'react';
import type { ApiError, DeliveryRow, HomingApi, ScheduleRow } from '../../../../shared/api';
import { useApiRead } from '../../hooks/useApiRead';
import { useCoalesced } from '../../hooks/useCoalesced';
import { useGatewayEvents } from '../../hooks/useGatewayEvents';

export interface SchedulesState {
  /** Null until first read. */
  readonly schedules: readonly ScheduleRow[] | null;
  /** The gateway's time zone: a schedule's own zone is shown when it differs. */
  readonly zone: string | undefined;
  readonly error: ApiError | null;
  /** The deliveries of the last runs' replies, by id (their ticks). */
  readonly deliveries: ReadonlyMap<string, DeliveryRow>;
  reload(): void;
}

/**
 * The schedules, read again shortly after a `schedules.changed` event (a burst
 * of them costs one read), and the delivery of each last run's reply, kept
 * current by `delivery.changed`.
 */
export function useSchedules(api: HomingApi): SchedulesState {
  const { value, error, load } = useApiRead(useCallback(() => api.listSchedules(), [api]), 'schedules');
  const reload = useCoalesced(load, 100);
  useEffect(load, [load]);
  const [deliveries, setDeliveries] = useState<ReadonlyMap<string, DeliveryRow>>(new Map());
  const tracked = useRef(new Set<string>());

  const ids = (value?.schedules ?? []).flatMap((row) => (row.lastRun?.obligationId ? [row.lastRun.obligationId] : []));
  const idsKey = ids.join(',');
  useEffect(() => {
    const wanted = idsKey ? idsKey.split(',') : [];
    tracked.current = new Set(wanted);
    const missing = wanted.filter((id) => !deliveries.has(id));
    if (missing.length === 0) return;
    void api.getDeliveries({ ids: missing }).then((result) => {
      if (!result.ok) return;
      setDeliveries((previous) => {
        const next = new Map(previous);
        for (const row of result.value) next.set(row.id, row);
        return next;
      });
    });
    // Only a change of the ids reads again (not each delivery update); events keep the rows current.
  }, [api, idsKey]);

  useGatewayEvents(api, (event) => {
    if (event.type === 'schedules.changed') reload();
    else if (event.type === 'delivery.changed' && tracked.current.has(event.delivery.id)) {
      setDeliveries((previous) => new Map(previous).set(event.delivery.id, event.delivery));
    }
  });
  return { schedules: value?.schedules ?? null, zone: value?.zone, error, deliveries, reload: load };
}
