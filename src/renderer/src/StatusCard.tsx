import type { GatewayStatus } from '../../shared/api';

export function StatusCard({ status }: { status: GatewayStatus }) {
  return (
    <section aria-labelledby="status-title" className="card">
      <h2 id="status-title">Gateway</h2>
      <dl className="facts">
        <dt>State</dt>
        <dd data-testid="gateway-state" className={`state state-${status.state}`}>
          {status.state}
        </dd>
        <dt>Version</dt>
        <dd data-testid="gateway-version">{status.version}</dd>
        <dt>Mode</dt>
        <dd>{status.mode === 'app' ? 'tray app' : 'headless'}</dd>
        <dt>Data</dt>
        <dd data-testid="gateway-data-dir" className="path">
          {status.dataDir}
        </dd>
        <dt>Up for</dt>
        <dd data-testid="gateway-uptime">{formatDuration(status.uptimeMs)}</dd>
      </dl>
    </section>
  );
}

export function formatDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return `${hours} h ${minutes % 60} min`;
}
