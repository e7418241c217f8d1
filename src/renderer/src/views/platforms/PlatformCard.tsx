import { useState, type ReactNode } from 'react';
import type { ConfigView, HomingApi, PlatformStatus } from '../../../../shared/api';
import { platformInfo } from '../../../../shared/platforms';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ErrorNote } from '../../components/ErrorNote';
import { PlatformIcon } from '../../components/PlatformIcon';
import { useOnline } from '../../connection';
import { explainApiError, explainPlatform, platformLabel } from '../../plain-words';
import { useFocusBackOnClose } from './form-focus';
import { isConfigured, isEnabled } from './platform-list';
import { removalWords } from './remove-platform';
import { secretWords } from './save-settings';

interface PlatformCardProps {
  readonly api: HomingApi;
  readonly name: string;
  /** What the gateway reports; absent for a platform it does not run (switched off, being added, just saved). */
  readonly status: PlatformStatus | undefined;
  /** config.json as in force; null until read. */
  readonly view: ConfigView | null;
  /** Whether its form is open (the form is the card's `children`). */
  readonly editing: boolean;
  readonly onEdit: () => void;
  /** Remove confirmed: the view takes it off the list and says how that went (this card is gone by then). */
  readonly onRemove: () => void;
  readonly children?: ReactNode;
}

/**
 * A platform on the list: its state and last error, which of its secrets are
 * stored, Reconnect, Edit (its form opens in the card) and Remove (asked
 * first). A platform being added has only its form.
 */
export function PlatformCard({ api, name, status, view, editing, onEdit, onRemove, children }: PlatformCardProps) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const online = useOnline();
  const editButton = useFocusBackOnClose(editing);
  const label = platformInfo(name)?.label ?? name;
  const configured = view ? isConfigured(view.config, name) : status !== undefined;
  const enabled = view ? isEnabled(view.config, name) : status !== undefined;
  const state = !configured ? 'new' : !enabled ? 'off' : (status?.state ?? 'connecting');
  const reconnect = async () => {
    setBusy(true);
    setError(null);
    const result = await api.reconnectPlatform({ name });
    setBusy(false);
    if (!result.ok) setError(explainApiError(`reconnect ${platformLabel(name)}`, result.error));
  };
  const stored = storedSecrets(name, view);
  return (
    <article className="card platform-card" aria-labelledby={`platform-${name}`} data-testid={`platform-${name}`}>
      <header className="card-head">
        <PlatformIcon platform={name} />
        <h3 id={`platform-${name}`}>{label}</h3>
        <span className={`badge state-${state}`} data-testid="platform-state">
          {state === 'new' ? 'not added yet' : state}
        </span>
      </header>
      <p className="muted">{words(name, state, status)}</p>
      {configured && stored.length > 0 && (
        <p className="muted" data-testid="platform-secrets">
          {stored.map((secret) => `${secret}: set`).join(' · ')}
        </p>
      )}
      {status?.notice && (
        <p className="error-note" role="status" data-testid="platform-notice">
          {status.notice.text}
        </p>
      )}
      {status?.rooms && status.rooms.length > 0 && (
        <ul className="room-list" aria-label={`${platformLabel(name)} rooms`} data-testid="platform-rooms">
          {status.rooms.map((room) => (
            <li key={room.id} title={room.id}>
              <span className="room-name">{room.name}</span>
              {room.direct && <span className="muted"> · direct chat</span>}
              {room.encrypted && <span className="badge state-degraded"> encrypted — not supported yet</span>}
            </li>
          ))}
        </ul>
      )}
      {configured && (
        <div className="card-actions">
          {status && enabled && (
            <button type="button" onClick={() => void reconnect()} disabled={busy || !online}>
              Reconnect
            </button>
          )}
          <button type="button" ref={editButton} aria-label={`Edit ${label}`} aria-expanded={editing} onClick={onEdit}>
            Edit
          </button>
          <button type="button" aria-label={`Remove ${label}`} onClick={() => setConfirming(true)} disabled={busy || !online || view === null}>
            Remove
          </button>
        </div>
      )}
      {children}
      {confirming && (
        <ConfirmDialog
          title={`Remove ${label}?`}
          body={removalWords(name)}
          confirmLabel="Remove"
          onCancel={() => setConfirming(false)}
          onConfirm={() => {
            setConfirming(false);
            onRemove();
          }}
        />
      )}
      <ErrorNote message={error} />
    </article>
  );
}

/** The local chat: always there, nothing to set. */
export function LocalChatCard({ status }: { status: PlatformStatus }) {
  return (
    <article className="card platform-card" aria-labelledby="platform-local" data-testid="platform-local">
      <header className="card-head">
        <PlatformIcon platform="local" />
        <h3 id="platform-local">Local chat</h3>
        <span className={`badge state-${status.state}`} data-testid="platform-state">
          {status.state}
        </span>
      </header>
      <p className="muted">The chat in this window; always connected.</p>
    </article>
  );
}

function words(name: string, state: string, status: PlatformStatus | undefined): string {
  if (state === 'new') return `Not added yet: fill in its settings and save, and Homing connects to ${platformLabel(name)}.`;
  if (state === 'off') return `Switched off (“${enabledLabel(name)}” is not ticked): Homing does not connect. Edit to switch it on.`;
  return status ? explainPlatform(status) : 'starting…';
}

/** The words of the platform's "Connect to …" box. */
function enabledLabel(name: string): string {
  const form = platformInfo(name)?.form;
  const box = form?.parts.find((part) => part.part === 'field' && part.field.key === 'enabled');
  return box?.part === 'field' ? box.field.label : 'Connect';
}

/** The platform's secrets the secret store holds, by their names in a sentence. */
function storedSecrets(name: string, view: ConfigView | null): string[] {
  const form = platformInfo(name)?.form;
  if (!form || !view) return [];
  return form.parts.flatMap((part) => (part.part === 'secret' && view.secretsSet.includes(part.name) ? [secretWords(part.label)] : []));
}
