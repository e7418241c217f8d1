import type { DeliveryRow } from '../../../../shared/api';
import { deliveryKind, KIND_LABEL, type DeliveryKind } from '../../plain-words';

const GLYPH: Record<DeliveryKind, string> = {
  waiting: '•',
  sending: '↗',
  retrying: '↻',
  'needs-you': '✕',
  'given-up': '✕',
  discarded: '✕',
  delivered: '✓',
};

/** A reply's delivery, as a tick in the window's one vocabulary (the same words as Deliveries). */
export function DeliveryTick({ row }: { row: DeliveryRow | undefined }) {
  if (!row) return null;
  const kind = deliveryKind(row);
  const progress = kind === 'sending' && row.chunksTotal > 1 ? ` ${row.chunksDelivered}/${row.chunksTotal}` : '';
  const label = `${GLYPH[kind]} ${KIND_LABEL[kind].toLowerCase()}${progress}`;
  return (
    <span className={`tick tick-${row.state} kind-${kind}`} data-testid="delivery-tick" data-state={row.state} data-kind={kind} title={row.lastError ?? label}>
      {label}
    </span>
  );
}
