import { useCallback, useEffect, useState } from 'react';
import type { HomingApi } from '../../../../shared/api';
import { ErrorNote } from '../../components/ErrorNote';
import { useApiRead } from '../../hooks/useApiRead';
import { useGatewayEvents } from '../../hooks/useGatewayEvents';
import { explainApiError, platformLabel } from '../../plain-words';

/**
 * Platforms → Telegram (or Matrix, Discord, XMPP) → requests: people who wrote to the bot and wait for
 * approval, by display name and pseudonym (never the raw id), with the code
 * the bot sent them. Approve lets their next message through; Deny keeps
 * everything of theirs away from the agent.
 */
export function PairingRequests({ api, platform }: { api: HomingApi; platform: 'telegram' | 'matrix' | 'discord' | 'xmpp' }) {
  const read = useCallback(() => api.listPairing(), [api]);
  const pairing = useApiRead(read);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  useEffect(() => pairing.load(), [pairing.load]);
  useGatewayEvents(api, (event) => {
    if (event.type === 'pairing.changed') pairing.load();
  });
  const decide = async (code: string, decision: 'approve' | 'deny') => {
    setBusy(code);
    setError(null);
    const result = await api.decidePairing({ code, decision });
    setBusy(null);
    if (!result.ok) setError(explainApiError(decision === 'approve' ? 'approve the request' : 'deny the request', result.error));
    pairing.load();
  };
  const requests = (pairing.value?.requests ?? []).filter((request) => request.platform === platform);
  const approved = (pairing.value?.approved ?? []).filter((entry) => entry.platform === platform);
  return (
    <section className="card pairing" aria-labelledby={`pairing-title-${platform}`} data-testid={`${platform}-requests`}>
      <h3 id={`pairing-title-${platform}`}>{platformLabel(platform)} — requests</h3>
      {requests.length === 0 ? (
        <p className="muted">Nobody is waiting. Someone new who writes to the agent gets a pairing code and shows up here.</p>
      ) : (
        <ul className="requests">
          {requests.map((request) => (
            <li key={request.code} data-testid="pairing-request">
              <span className="name">{request.name ?? 'Someone without a name'}</span> <span className="muted">{request.sender}</span>{' '}
              <code>{request.code}</code>{' '}
              <button type="button" disabled={busy !== null} onClick={() => void decide(request.code, 'approve')}>
                Approve
              </button>{' '}
              <button type="button" disabled={busy !== null} onClick={() => void decide(request.code, 'deny')}>
                Deny
              </button>
            </li>
          ))}
        </ul>
      )}
      {approved.length > 0 && (
        <p className="muted" data-testid="pairing-approved">
          Approved: {approved.map((entry) => entry.name ?? entry.sender).join(', ')}
        </p>
      )}
      <ErrorNote message={error ?? (pairing.error && explainApiError('read the pairing requests', pairing.error))} />
    </section>
  );
}
