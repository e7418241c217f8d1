import type { DeliveryRow } from '../../../../shared/api';
import { failedForGood, isDiscarded } from '../../plain-words';

/** A reply's delivery, as a tick: recorded, sending with part progress, delivered, failed. */
export function DeliveryTick({ row }: { row: DeliveryRow | undefined }) {
  if (!row) return null;
  const label = tickLabel(row);
  return (
    <span className={`tick tick-${row.state}`} data-testid="delivery-tick" data-state={row.state} title={row.lastError ?? label}>
      {label}
    </span>
  );
}

function tickLabel(row: DeliveryRow): string {
  switch (row.state) {
    case 'pending':
      return '• recorded';
    case 'attempting':
      return row.chunksTotal > 1 ? `↗ sending ${row.chunksDelivered}/${row.chunksTotal}` : '↗ sending…';
    case 'delivered':
      return '✓ delivered';
    case 'failed':
      return failedForGood(row) ? '✕ failed' : '↻ failed, will retry';
    case 'abandoned':
      return isDiscarded(row) ? '✕ discarded' : '✕ not delivered';
  }
}
