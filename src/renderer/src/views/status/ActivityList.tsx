import { useActivity, type ActivityLog } from '../../hooks/useActivity';
import { clockTime } from '../../format';
import { describeEvent } from './describe-event';

/** The live event stream. */
export function ActivityList({ log }: { log: ActivityLog }) {
  const entries = useActivity(log);
  return (
    <section className="card activity" aria-labelledby="activity-title">
      <h3 id="activity-title">Activity</h3>
      {entries.length === 0 ? (
        <p className="muted">Nothing has happened since this window opened.</p>
      ) : (
        <ol className="events" aria-live="off">
          {entries.map((entry) => (
            <li key={entry.n}>
              <time>{clockTime(entry.at)}</time> <code>{entry.event.type}</code> <span>{describeEvent(entry.event)}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
