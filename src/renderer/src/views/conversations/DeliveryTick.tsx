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
  const { kind, label } = tickOf(row, waitingFor);
  return (
    <span className={`tick tick-${row.state} kind-${kind}`} data-testid="delivery-tick" data-state={row.state} data-kind={kind} title={row.lastError ?? label}>
      {label}
    </span>
  );
}

/** The tick's kind and words: a reply owed to a platform that is away waits for it, whatever its row says. */
export function tickOf(
  row: Pick<DeliveryRow, 'state' | 'nextAttemptAt' | 'abandonReason' | 'chunksDelivered' | 'chunksTotal'>,
  waitingFor?: string,
): { readonly kind: DeliveryKind; readonly label: string } {
  if (waitingFor !== undefined && (row.state === 'attempting' || row.state === 'pending')) {
    return { kind: 'waiting', label: `${GLYPH.waiting} waiting for ${waitingFor}` };
  }
  const kind = deliveryKind(row);
  const progress = kind === 'sending' && row.chunksTotal > 1 ? ` ${row.chunksDelivered}/${row.chunksTotal}` : '';
  return { kind, label: `${GLYPH[kind]} ${KIND_LABEL[kind].toLowerCase()}${progress}` };
}
