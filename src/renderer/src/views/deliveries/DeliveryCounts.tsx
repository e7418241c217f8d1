import type { GatewayOverview } from '../../../../shared/api';
import { owedTotal } from '../../plain-words';

/** The counts at the top of Deliveries: what is owed, at a glance. */
export function DeliveryCounts({ counts }: { counts: GatewayOverview['deliveries'] }) {
  const owed = owedTotal(counts);
  const items: [string, number, string, string][] = [
    ['owed', owed, 'Owed', 'replies not delivered yet'],
    ['sending', counts.pending + counts.attempting, 'Waiting or sending', 'recorded, on their way'],
    ['retrying', counts.failed, 'Retrying', 'failed; Homing tries again'],
    ['needs-you', counts.failedPermanently, 'Need you', 'refused for good: retry or discard'],
    ['abandoned', counts.abandoned, 'Given up', 'attempt cap or stale'],
    ['delivered', counts.deliveredLastDay, 'Delivered', 'in the last 24 h'],
  ];
  return (
    <dl className="counts" aria-label="Deliveries by state">
      {items.map(([key, value, label, hint]) => (
        <div key={key} className={`count count-${key}${value > 0 && key !== 'delivered' && key !== 'sending' ? ' has' : ''}`}>
          <dt title={hint}>{label}</dt>
          <dd data-testid={`count-${key}`}>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
