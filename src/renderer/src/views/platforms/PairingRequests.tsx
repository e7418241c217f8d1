import { useCallback, useEffect, useState } from 'react';
import type { ApiError, HomingApi, PairingOverview } from '../../../../shared/api';
import { ErrorNote } from '../../components/ErrorNote';
import { useApiRead } from '../../hooks/useApiRead';
import { useGatewayEvents } from '../../hooks/useGatewayEvents';
import { explainApiError, platformLabel } from '../../plain-words';
import { hasPairing } from './platform-list';

export interface Pairing {
  readonly value: PairingOverview | null;
  readonly error: ApiError | null;
  readonly load: () => void;
}

/** The pairing requests of every platform, read once for all of Platforms and again when one arrives or is decided. */
export function usePairing(api: HomingApi): Pairing {
  const pairing = useApiRead(useCallback(() => api.listPairing(), [api]), 'pairing');
  useEffect(() => pairing.load(), [pairing.load]);
  useGatewayEvents(api, (event) => {
    if (event.type === 'pairing.changed') pairing.load();
  });
  return pairing;
}

/**
 * Platforms → Telegram (or Matrix, Discord, XMPP, IRC) → requests: people who wrote to the bot and wait for
 * approval, by display name and pseudonym (never the raw id), with the code
 * the bot sent them. Approve lets their next message through; Deny keeps
 * everything of theirs away from the agent.
 *
 * Under a flood (a crowd of new senders within the hour) the requests of the
 * last hour are counted, not listed: the owner cannot pick a person out of a
 * hundred cards, but the person can tell them their code, which is approved
 * here by typing it. Requests older than the flood's hour keep their cards.
 *
 * A platform nobody asked on has no card here: it appears with the first request.
 */
export function PairingRequests({ api, platform, pairing }: { api: HomingApi; platform: string; pairing: Pairing }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [typed, setTyped] = useState('');
  const decide = async (code: string, decision: 'approve' | 'deny') => {
    setBusy(code);
    setError(null);
    const result = await api.decidePairing({ code, decision });
    setBusy(null);
    if (!result.ok) setError(explainApiError(decision === 'approve' ? 'approve the request' : 'deny the request', result.error));
    pairing.load();
  };
  const dismiss = async () => {
    setBusy('flood');
    setError(null);
    const result = await api.dismissPairingFlood({ platform });
    setBusy(null);
    if (!result.ok) setError(explainApiError('forget the requests', result.error));
    pairing.load();
  };
  const requests = (pairing.value?.requests ?? []).filter((request) => request.platform === platform);
  const approved = (pairing.value?.approved ?? []).filter((entry) => entry.platform === platform);
  const flood = (pairing.value?.floods ?? []).find((entry) => entry.platform === platform);
  const listed = flood ? requests.filter((request) => request.requestedAt < flood.since) : requests;
  if (!hasPairing(pairing.value, platform)) return null;
  return (
    <section className="card pairing" aria-labelledby={`pairing-title-${platform}`} data-testid={`${platform}-requests`}>
      <h3 id={`pairing-title-${platform}`}>{platformLabel(platform)} — requests</h3>
      {flood && (
        <>
          <p role="status" className="error-note" data-testid="pairing-flood">
            A flood? {flood.lastHour} new senders asked on {platformLabel(platform)} in the last hour; their requests are counted here, not listed one by one.
            {flood.notKept > 0 && ` ${flood.notKept} of them were not kept (the list is full) and got no code.`} Someone you expect can tell you the code they were sent:
          </p>
          <form
            className="inline"
            onSubmit={(event) => {
              event.preventDefault();
              void decide(typed.trim(), 'approve').then(() => setTyped(''));
            }}
          >
            <input aria-label={`Pairing code to approve on ${platformLabel(platform)}`} value={typed} onChange={(event) => setTyped(event.target.value)} autoComplete="off" />
            <button type="submit" disabled={busy !== null || typed.trim() === ''}>
              Approve code
            </button>
          </form>
          <p className="muted">
            <button type="button" disabled={busy !== null} onClick={() => void dismiss()}>
              Forget the last hour&apos;s requests
            </button>{' '}
            when the flood is over: a real person among them gets a new code when they write again.
          </p>
        </>
      )}
      {listed.length === 0 ? (
        !flood && <p className="muted">Nobody is waiting. Someone new who writes to the agent gets a pairing code and shows up here.</p>
      ) : (
        <ul className="requests">
          {listed.map((request) => (
            <li key={request.code} data-testid="pairing-request">
              <span className="name">{request.name ?? 'Someone without a name'}</span> <span className="muted">{request.sender}</span>{' '}
              <code>{request.code}</code> {!request.told && <span className="muted">(not sent yet: it goes out as the platform allows) </span>}
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
      <ErrorNote message={error} />
    </section>
  );
}
