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

/**
 * A reply's delivery, as a tick in the window's one vocabulary (the same words as
 * Deliveries). A reply being sent while its platform is away is not on its way:
 * it waits for the platform (`waitingFor`, its label), and says so.
 */
export function DeliveryTick({ row, waitingFor }: { row: DeliveryRow | undefined; waitingFor?: string | undefined }) {
  if (!row) return null;
  const held = waitingFor !== undefined && (row.state === 'attempting' || row.state === 'pending');
  const kind = held ? 'waiting' : deliveryKind(row);
  const progress = kind === 'sending' && row.chunksTotal > 1 ? ` ${row.chunksDelivered}/${row.chunksTotal}` : '';
  const label = held ? `${GLYPH.waiting} waiting for ${waitingFor}` : `${GLYPH[kind]} ${KIND_LABEL[kind].toLowerCase()}${progress}`;
  return (
    <span className={`tick tick-${row.state} kind-${kind}`} data-testid="delivery-tick" data-state={row.state} data-kind={kind} title={row.lastError ?? label}>
      {label}
    </span>
  );
}
