import { useCallback, useEffect, useRef } from 'react';
import type { HomingApi } from '../../../../shared/api';
import { ErrorNote } from '../../components/ErrorNote';
import { useApiRead } from '../../hooks/useApiRead';
import { explainApiError } from '../../plain-words';

/** The tail of the gateway's log (the same lines as its log file), read again with the Status view's clock. */
export function LogsPanel({ api, tick }: { api: HomingApi; tick: number }) {
  const { value, error, load } = useApiRead(
    useCallback(() => api.getLogTail({ lines: 200 }), [api]),
    'logs',
  );
  useEffect(load, [load, tick]);
  const ref = useRef<HTMLPreElement>(null);
  const lines = value?.lines ?? [];
  // Show the newest line, as a terminal does.
  useEffect(() => {
    if (ref.current) ref.current.scrollTop = ref.current.scrollHeight;
  }, [lines.length]);
  return (
    <section className="card logs" aria-labelledby="logs-title">
      <h3 id="logs-title">Logs</h3>
      <p className="muted">The gateway’s last {lines.length || ''} log lines, newest at the bottom (secrets are never logged).</p>
      <ErrorNote message={error && explainApiError('read the log', error)} />
      <pre ref={ref} className="log-tail" tabIndex={0} aria-label="Gateway log" data-testid="log-tail">
        {lines.length > 0 ? lines.join('\n') : 'Nothing logged yet.'}
      </pre>
    </section>
  );
}
