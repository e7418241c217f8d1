import type { ReactNode } from 'react';
import type { DeliveryRow, ScheduleRow } from '../../../../shared/api';
import { PlatformIcon } from '../../components/PlatformIcon';
import { useOnline } from '../../connection';
import { useFocusBackOnClose } from '../platforms/form-focus';
import { tickOf } from '../conversations/DeliveryTick';
import { absoluteTime, actionWords, lastRunWords, nextRunWords, relativeTime, shortBody, whenWords, whereWords } from './schedule-words';

export type ScheduleRowAction = 'pause' | 'resume' | 'run' | 'edit' | 'delete' | 'open';

interface ScheduleItemProps {
  readonly row: ScheduleRow;
  readonly zone: string;
  readonly now: number;
  /** The delivery of the last run's reply, once read. */
  readonly delivery: DeliveryRow | undefined;
  readonly editing: boolean;
  readonly busy: boolean;
  readonly note: { readonly text: string; readonly error: boolean } | undefined;
  readonly onAction: (action: ScheduleRowAction, row: ScheduleRow) => void;
  /** The Edit form, open in the card. */
  readonly children?: ReactNode;
}

/** One schedule: when, where, what, its next run and its last one, and what can be done with it. */
export function ScheduleItem({ row, zone, now, delivery, editing, busy, note, onAction, children }: ScheduleItemProps) {
  const online = useOnline();
  const editButton = useFocusBackOnClose(editing);
  const last = row.lastRun ? lastRunWords(row.lastRun, row.action) : null;
  const running = row.lastRun?.state === 'running';
  const titleId = `schedule-${row.id}-name`;
  return (
    <article className={`card schedule${row.paused ? ' paused' : ''}`} aria-labelledby={titleId} data-testid="schedule-row" data-id={row.id} data-paused={row.paused}>
      <header className="card-head">
        <PlatformIcon platform={row.where.platform} />
        <h3 id={titleId} data-testid="schedule-name">
          {row.name}
        </h3>
        {row.paused && (
          <span className="badge state-paused" data-testid="schedule-paused">
            paused
          </span>
        )}
      </header>
      <dl className="facts schedule-facts">
        <dt>When</dt>
        <dd data-testid="schedule-when">{whenWords(row, zone)}</dd>
        <dt>Where</dt>
        <dd data-testid="schedule-where-words">{whereWords(row.where)}</dd>
        <dt>What</dt>
        <dd data-testid="schedule-what" title={row.body}>
          <span className="muted-or">{actionWords(row.action)}:</span> {shortBody(row.body)}
        </dd>
        <dt>Next run</dt>
        <dd data-testid="schedule-next" className={row.paused ? 'run-paused' : undefined} title={row.nextRunAt !== null ? new Date(row.nextRunAt).toString() : undefined}>
          {nextRunWords(row, zone, now)}
        </dd>
        <dt>Last run</dt>
        <dd data-testid="schedule-last" data-state={row.lastRun?.state ?? 'none'}>
          {row.lastRun && last ? (
            <>
              <span className={`run-${last.tone}`}>{last.text}</span>{' '}
              <span className="muted-or" title={new Date(row.lastRun.dueAt).toString()}>
                · due {absoluteTime(row.lastRun.dueAt, zone, now)} ({relativeTime(row.lastRun.dueAt, now)})
              </span>
              {row.lastRun.obligationId && (
                <>
                  {' '}
                  {delivery && (
                    <span className={`tick tick-${delivery.state}`} data-testid="schedule-delivery">
                      {tickOf(delivery).label}
                    </span>
                  )}{' '}
                  <button type="button" className="link" onClick={() => onAction('open', row)} data-testid="schedule-open-reply">
                    Show the reply
                  </button>
                </>
              )}
            </>
          ) : (
            <span className="muted-or">not run yet</span>
          )}
        </dd>
      </dl>
      <div className="card-actions">
        <button type="button" disabled={busy || !online} onClick={() => onAction(row.paused ? 'resume' : 'pause', row)} aria-label={`${row.paused ? 'Resume' : 'Pause'} ${row.name}`}>
          {row.paused ? 'Resume' : 'Pause'}
        </button>
        <button type="button" disabled={busy || running || !online} onClick={() => onAction('run', row)} aria-label={`Run ${row.name} now`}>
          Run now
        </button>
        <button type="button" ref={editButton} aria-expanded={editing} onClick={() => onAction('edit', row)} aria-label={`Edit ${row.name}`}>
          Edit
        </button>
        <button type="button" disabled={busy || !online} onClick={() => onAction('delete', row)} aria-label={`Delete ${row.name}`}>
          Delete
        </button>
        {note && (
          <span className={note.error ? 'row-note error' : 'row-note'} role={note.error ? 'alert' : 'status'} data-testid="schedule-note">
            {note.text}
          </span>
        )}
      </div>
      {children}
    </article>
  );
}
