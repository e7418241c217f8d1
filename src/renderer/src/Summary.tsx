import type { GatewayOverview } from '../../shared/api';
import { owedTotal, platformLabel } from './plain-words';

/** One line under the title: is anything owed, and whose move is it? */
export function Summary({ overview, lastKnown, onShowDeliveries }: { overview: GatewayOverview | null; lastKnown: boolean; onShowDeliveries: () => void }) {
  if (!overview) {
    return (
      <p className="summary muted" role="status" data-testid="summary">
        {lastKnown ? 'Not connected to the gateway.' : 'Connecting to the gateway…'}
      </p>
    );
  }
  const { deliveries, platforms, ledger } = overview;
  const owed = owedTotal(deliveries);
  const down = platforms.filter((platform) => platform.state !== 'connected');
  const parts: string[] = [];
  if (!ledger.ok) parts.push('the ledger is failing (Homing’s problem: see Status)');
  if (owed === 0) parts.push('nothing owed');
  else {
    parts.push(`${owed} repl${owed === 1 ? 'y' : 'ies'} owed`);
    if (deliveries.failedPermanently > 0) parts.push(`${deliveries.failedPermanently} need${deliveries.failedPermanently === 1 ? 's' : ''} you`);
  }
  if (down.length > 0) parts.push(`${down.map((platform) => platformLabel(platform.name)).join(', ')} not connected`);
  const attention = owed > 0 || !ledger.ok;
  // Never shown as current while the gateway is away: "nothing owed" might no longer be true.
  const text = (lastKnown ? 'Last known: ' : '') + parts.join(' · ');
  return (
    <p className={`summary${attention ? ' attention' : ''}${lastKnown ? ' last-known' : ''}`} role="status" data-testid="summary" data-last-known={lastKnown ? 'true' : undefined}>
      {attention ? (
        <button type="button" className="link" onClick={onShowDeliveries}>
          {text}
        </button>
      ) : (
        text
      )}
    </p>
  );
}
