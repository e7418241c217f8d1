import type { GatewayOverview } from '../../../../shared/api';
import { givenUpTotal, KIND_LABEL, owedTotal } from '../../plain-words';

type Counts = GatewayOverview['deliveries'];

/**
 * The counts at the top of Deliveries, one box per tab: Owed (waiting, sending,
 * retrying), Given up (needs you, given up, discarded), Delivered. A box's
 * number is its tab's row count, and the header, the tray and the CLI count
 * owed the same way (ledger/states.ts).
 */
export function DeliveryCounts({ counts }: { counts: Counts }) {
  const boxes: [string, number, string, [string, string, number][]][] = [
    [
      'owed',
      owedTotal(counts),
      'Owed',
      [
        ['waiting', KIND_LABEL.waiting, counts.pending],
        ['sending', KIND_LABEL.sending, counts.attempting],
        ['retrying', KIND_LABEL.retrying, counts.failed],
      ],
    ],
    [
      'abandoned',
      givenUpTotal(counts),
      'Given up',
      [
        ['needs-you', KIND_LABEL['needs-you'], counts.failedPermanently],
        ['given-up', 'Stopped trying', counts.abandoned],
        ['discarded', KIND_LABEL.discarded, counts.discarded],
      ],
    ],
    ['delivered', counts.deliveredLastDay, 'Delivered (24 h)', []],
  ];
  return (
    <dl className="counts" aria-label="Deliveries by state">
      {boxes.map(([key, value, label, parts]) => (
        <div key={key} className={`count count-${key}${value > 0 && key !== 'delivered' ? ' has' : ''}`}>
          <dt>{label}</dt>
          <dd data-testid={`count-${key}`}>{value}</dd>
          {parts.length > 0 && (
            <dd className="count-parts">
              {parts.map(([part, partLabel, n], index) => (
                <span key={part}>
                  {index > 0 && ' · '}
                  {partLabel} <span data-testid={`count-${part}`}>{n}</span>
                </span>
              ))}
            </dd>
          )}
        </div>
      ))}
    </dl>
  );
}
