import type { DeliveryFilter } from '../../../../shared/api';

/** Says what the tab means when there is nothing in it. */
export function EmptyDeliveries({ filter }: { filter: DeliveryFilter }) {
  const text: Record<DeliveryFilter, [string, string]> = {
    owed: [
      'Nothing is owed.',
      'A reply is "owed" from the moment the agent writes it until the chat platform confirms it arrived. If a platform is down, its replies wait here and are sent when it is back.',
    ],
    abandoned: ['Nothing was given up.', 'Homing gives up on a reply after too many failed attempts or when it has waited for a day; you can retry it from here.'],
    delivered: ['Nothing delivered yet.', 'Replies that reached their chat appear here for a week.'],
  };
  return (
    <div className="empty" data-testid="deliveries-empty">
      <p className="empty-title">{text[filter][0]}</p>
      <p className="muted">{text[filter][1]}</p>
    </div>
  );
}
