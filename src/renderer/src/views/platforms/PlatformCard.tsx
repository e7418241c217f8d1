import { useState } from 'react';
import type { HomingApi, PlatformStatus } from '../../../../shared/api';
import { ErrorNote } from '../../components/ErrorNote';
import { PlatformIcon } from '../../components/PlatformIcon';
import { useOnline } from '../../connection';
import { explainApiError, explainPlatform, platformLabel } from '../../plain-words';

/** A platform's state and last error, with Reconnect. */
export function PlatformCard({ api, platform }: { api: HomingApi; platform: PlatformStatus }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const online = useOnline();
  const reconnect = async () => {
    setBusy(true);
    setError(null);
    const result = await api.reconnectPlatform({ name: platform.name });
    setBusy(false);
    if (!result.ok) setError(explainApiError(`reconnect ${platformLabel(platform.name)}`, result.error));
  };
  return (
    <article className="card platform-card" aria-labelledby={`platform-${platform.name}`} data-testid={`platform-${platform.name}`}>
      <header className="card-head">
        <PlatformIcon platform={platform.name} />
        <h3 id={`platform-${platform.name}`}>{platform.name === 'local' ? 'Local chat' : platformLabel(platform.name)}</h3>
        <span className={`badge state-${platform.state}`} data-testid="platform-state">
          {platform.state}
        </span>
      </header>
      <p className="muted">{platform.name === 'local' ? 'The chat in this window; always connected.' : explainPlatform(platform)}</p>
      {platform.notice && (
        <p className="error-note" role="status" data-testid="platform-notice">
          {platform.notice.text}
        </p>
      )}
      {platform.rooms && platform.rooms.length > 0 && (
        <ul className="room-list" aria-label={`${platformLabel(platform.name)} rooms`} data-testid="platform-rooms">
          {platform.rooms.map((room) => (
            <li key={room.id} title={room.id}>
              <span className="room-name">{room.name}</span>
              {room.direct && <span className="muted"> · direct chat</span>}
              {room.encrypted && <span className="badge state-degraded"> encrypted — not supported yet</span>}
            </li>
          ))}
        </ul>
      )}
      {platform.name !== 'local' && (
        <button type="button" onClick={() => void reconnect()} disabled={busy || !online}>
          Reconnect
        </button>
      )}
      <ErrorNote message={error} />
    </article>
  );
}
