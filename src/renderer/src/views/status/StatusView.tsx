import { useCallback, useEffect, useState } from 'react';
import type { GatewayOverview, HomingApi } from '../../../../shared/api';
import { ErrorNote } from '../../components/ErrorNote';
import { useOnline } from '../../connection';
import { ago, duration, fileSize } from '../../format';
import type { ActivityLog } from '../../hooks/useActivity';
import { useApiRead } from '../../hooks/useApiRead';
import { useNow } from '../../hooks/useNow';
import { errorWords, explainApiError } from '../../plain-words';
import { ActivityList } from './ActivityList';
import { LogsPanel } from './LogsPanel';

/** Gateway state, last sweep, ledger health, and the live activity. */
export function StatusView({ api, overview, activity }: { api: HomingApi; overview: GatewayOverview | null; activity: ActivityLog }) {
  const { value: status, error, load } = useApiRead(useCallback(() => api.getStatus(), [api]), 'status');
  const [sweepNote, setSweepNote] = useState<{ text: string; ok: boolean } | null>(null);
  const now = useNow(5_000);
  const online = useOnline();
  // Read again every 5 s, for the uptime.
  useEffect(load, [load, now]);

  const sweep = async () => {
    const result = await api.sweepNow();
    setSweepNote(
      result.ok
        ? { text: `Swept: ${result.value.claimed} sent again, ${result.value.owed} still owed.`, ok: true }
        : { text: explainApiError('sweep', result.error), ok: false },
    );
  };
  const ledger = overview?.ledger;
  const last = overview?.lastSweep;
  return (
    <section className="view status" aria-labelledby="status-title">
      <div className="view-head">
        <h2 id="status-title">Status</h2>
      </div>
      <ErrorNote message={error && explainApiError('read the status', error)} />
      <div className="cards">
        <section className="card" aria-labelledby="gateway-title">
          <h3 id="gateway-title">Gateway</h3>
          <dl className="facts">
            <dt>State</dt>
            <dd data-testid="gateway-state" className={`state state-${online ? (status?.state ?? overview?.state ?? 'starting') : 'stopped'}`}>
              {online ? (status?.state ?? overview?.state ?? '…') : `not connected (last known: ${status?.state ?? overview?.state ?? 'unknown'})`}
            </dd>
            <dt>Version</dt>
            <dd data-testid="gateway-version">{status?.version ?? '…'}</dd>
            <dt>Mode</dt>
            <dd>{status ? (status.mode === 'app' ? 'tray app' : 'headless') : '…'}</dd>
            <dt>Data</dt>
            <dd data-testid="gateway-data-dir" className="path">
              {status?.dataDir ?? '…'}
            </dd>
            <dt>Up for</dt>
            <dd>{status ? duration(status.uptimeMs) : '…'}</dd>
            <dt>Answering</dt>
            <dd>{overview ? `${overview.turnsRunning} conversation${overview.turnsRunning === 1 ? '' : 's'}` : '…'}</dd>
          </dl>
          {overview?.media && <MediaUsage media={overview.media} />}
          {overview?.configError && <p className="error-note">config.json is not in force: {overview.configError}</p>}
        </section>
        <section className="card" aria-labelledby="sweep-title">
          <h3 id="sweep-title">Last sweep</h3>
          {last ? (
            <p data-testid="last-sweep">
              {ago(last.at, now)}: found {last.report.owed} owed ({last.report.waitingForPlatform} waiting for a platform), sent {last.report.claimed} again, gave up on{' '}
              {last.report.abandoned}, pruned {last.report.pruned} old deliveries.
            </p>
          ) : (
            <p className="muted">No sweep yet.</p>
          )}
          <p className="muted">A sweep looks for replies still owed — at start, after sleep, when a platform reconnects, and every few seconds.</p>
          <button type="button" disabled={!online} onClick={() => void sweep()}>
            Sweep now
          </button>
          {sweepNote && (
            <p role={sweepNote.ok ? 'status' : 'alert'} className={sweepNote.ok ? 'ok-note' : 'error-note'}>
              {sweepNote.text}
            </p>
          )}
        </section>
        <section className="card" aria-labelledby="ledger-title">
          <h3 id="ledger-title">Delivery ledger</h3>
          {!ledger ? (
            <p className="muted">…</p>
          ) : ledger.ok ? (
            <p data-testid="ledger-health">Healthy: every reply is recorded before it is sent.</p>
          ) : (
            <p data-testid="ledger-health" className="error-note">
              The ledger could not write for {ledger.failures} repl{ledger.failures === 1 ? 'y' : 'ies'} — {errorWords(ledger.lastError)} The replies were still sent, but a crash now could lose
              track of them.
            </p>
          )}
        </section>
      </div>
      <ActivityList log={activity} />
      <LogsPanel api={api} tick={now} />
    </section>
  );
}

/** "Media: 12 files, 3.4 MB kept for 30 days": what the data directory holds of photos, voice notes and files, and for how long. */
function MediaUsage({ media }: { media: NonNullable<GatewayOverview['media']> }) {
  const days = Number(media.keepDays.toFixed(2));
  return (
    <p data-testid="media-usage">
      Media: {media.files} file{media.files === 1 ? '' : 's'}, {fileSize(media.bytes)} kept for {days} day{days === 1 ? '' : 's'}
    </p>
  );
}
