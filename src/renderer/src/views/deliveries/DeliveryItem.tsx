import type { DeliveryRow, PlatformStatus } from '../../../../shared/api';
import { PlatformIcon } from '../../components/PlatformIcon';
import { useOnline } from '../../connection';
import { ago, clockTime, until } from '../../format';
import { chatLabel, explainDelivery, KIND_LABEL, platformLabel } from '../../plain-words';

export type RowAction = 'retry' | 'discard' | 'copy' | 'open';

interface DeliveryItemProps {
  readonly row: DeliveryRow;
  readonly platform: PlatformStatus | undefined;
  readonly now: number;
  readonly index: number;
  readonly total: number;
  /** What the last action on this row said (an error, or "Copied"). */
  readonly note: { readonly text: string; readonly error: boolean } | undefined;
  readonly busy: boolean;
  readonly onAction: (action: RowAction, row: DeliveryRow) => void;
}

/** The chat's kind, from the session key (`agent:<id>:<platform>:<chatType>:…`), for its icon. */
function chatTypeOf(sessionKey: string): 'direct' | 'group' | 'channel' | 'thread' | undefined {
  const kind = sessionKey.split(':')[3];
  return kind === 'direct' || kind === 'group' || kind === 'channel' || kind === 'thread' ? kind : undefined;
}

/** "next try 14:05 (in 3 min)": when Homing tries by itself, so nobody waits on an invisible backoff. */
function nextTry(at: number, now: number): string {
  return `${clockTime(at)} (${until(at, now)})`;
}

/** One reply in the Deliveries list: where it goes, what it says, why it is owed and what to do. Fixed height (virtualized). */
export function DeliveryItem({ row, platform, now, index, total, note, busy, onAction }: DeliveryItemProps) {
  const online = useOnline();
  const why = explainDelivery(row, platform);
  const state = KIND_LABEL[why.kind].toLowerCase();
  const owed = why.kind === 'waiting' || why.kind === 'sending' || why.kind === 'retrying';
  // A reply waiting for its platform goes out when the platform's reconnect (its backoff) succeeds.
  const reconnectAt = owed && why.kind !== 'retrying' && platform && platform.state !== 'connected' ? (platform.nextAttemptAt ?? null) : null;
  const settled = row.state === 'delivered';
  const retryLabel = row.state === 'pending' || row.state === 'attempting' ? 'Send now' : 'Retry';
  return (
    <article
      className={`delivery blame-${why.blame}`}
      role="listitem"
      aria-posinset={index + 1}
      aria-setsize={total}
      aria-label={`Reply to ${chatLabel(row)} on ${row.platform}, ${state}`}
      data-testid="delivery-row"
      data-id={row.id}
      data-state={row.state}
    >
      <header className="delivery-head">
        <PlatformIcon platform={row.platform} chatType={chatTypeOf(row.sessionKey)} />
        <span className="chat">{chatLabel(row)}</span>
        <span className={`badge state-${row.state} kind-${why.kind}`} data-testid="delivery-kind">
          {state}
        </span>
        <span className="age" title={new Date(row.createdAt).toLocaleString()}>
          {ago(row.createdAt, now)}
        </span>
      </header>
      <p className="preview" title={row.preview}>
        {row.preview || '(empty reply)'}
      </p>
      <p className="why" data-testid="delivery-why" title={why.text}>
        <span className="blame">{KIND_LABEL[why.kind]}:</span> {why.text}
      </p>
      <p className="meta">
        <span>
          {row.attempts} attempt{row.attempts === 1 ? '' : 's'}
        </span>
        <span>
          parts {row.chunksDelivered}/{row.chunksTotal}
        </span>
        {why.kind === 'retrying' && row.nextAttemptAt !== null && <span data-testid="next-try">next try {nextTry(row.nextAttemptAt, now)}</span>}
        {reconnectAt !== null && (
          <span data-testid="next-try">
            {platformLabel(row.platform)} reconnects {nextTry(reconnectAt, now)}
          </span>
        )}
      </p>
      <div className="row-actions">
        {!settled && (
          <button type="button" disabled={busy || !online} onClick={() => onAction('retry', row)} aria-label={`${retryLabel}: reply to ${chatLabel(row)}`}>
            {retryLabel}
          </button>
        )}
        {!settled && row.state !== 'abandoned' && (
          <button type="button" disabled={busy || !online} onClick={() => onAction('discard', row)} aria-label={`Discard reply to ${chatLabel(row)}`}>
            Discard
          </button>
        )}
        <button type="button" disabled={!online} onClick={() => onAction('copy', row)} aria-label={`Copy text of reply to ${chatLabel(row)}`}>
          Copy text
        </button>
        <button type="button" onClick={() => onAction('open', row)} aria-label={`Open conversation with ${chatLabel(row)}`}>
          Open
        </button>
        {note && (
          <span className={note.error ? 'row-note error' : 'row-note'} role={note.error ? 'alert' : 'status'} data-testid="row-note">
            {note.text}
          </span>
        )}
      </div>
    </article>
  );
}
