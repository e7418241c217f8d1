import { useActivity, type ActivityLog } from '../../hooks/useActivity';
import { clockTime } from '../../format';

/** The live event stream. */
export function ActivityList({ log }: { log: ActivityLog }) {
  const entries = useActivity(log);
  return (
    <section className="card activity" aria-labelledby="activity-title">
      <h3 id="activity-title">Activity</h3>
      {entries.length === 0 ? (
        <p className="muted">Nothing has happened yet. Connections, replies and refused senders show up here; the last 500 are kept.</p>
      ) : (
        <ol className="events" aria-live="off">
          {entries.map((entry) => (
            <li key={entry.n} className={`tone-${entry.tone}`} data-testid="activity-entry">
              <time dateTime={new Date(entry.at).toISOString()} title={new Date(entry.at).toLocaleString()}>
                {clockTime(entry.at)}
              </time>{' '}
              <span>{entry.text}</span>
              {entry.times !== undefined && entry.times > 1 && (
                <span className="muted" aria-label={`${entry.times} times`}>
                  {' '}
                  ×{entry.times}
                </span>
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
