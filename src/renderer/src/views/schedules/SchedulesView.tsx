import { useRef, useState } from 'react';
import type { HomingApi, ScheduleRow, SessionSummary } from '../../../../shared/api';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ErrorNote } from '../../components/ErrorNote';
import { useOnline } from '../../connection';
import { useNow } from '../../hooks/useNow';
import { useRowActions } from '../../hooks/useRowActions';
import { explainApiError } from '../../plain-words';
import { ScheduleFormView } from './ScheduleFormView';
import { ScheduleItem, type ScheduleRowAction } from './ScheduleItem';
import { nextRunWords, whereWords } from './schedule-words';
import { useSchedules } from './useSchedules';
import './schedules.css';

interface SchedulesViewProps {
  readonly api: HomingApi;
  /** The known conversations (the window's list), for "Where". */
  readonly sessions: readonly SessionSummary[];
  /** Opens the conversation a schedule writes in (its last reply is there). */
  readonly onOpenConversation: (sessionKey: string) => void;
}

type Note = { readonly text: string; readonly error: boolean };

/** Schedules: the assistant writes first (a morning briefing, a weekly reminder). A list, its actions, and the form that makes one. */
export function SchedulesView({ api, sessions, onOpenConversation }: SchedulesViewProps) {
  const data = useSchedules(api);
  const now = useNow(15_000);
  const online = useOnline();
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<number | null>(null);
  const [confirming, setConfirming] = useState<ScheduleRow | null>(null);
  const { notes, busy, note, withBusy } = useRowActions<number, Note>();
  const [viewNote, setViewNote] = useState<Note | null>(null);
  const newButton = useRef<HTMLButtonElement>(null);
  const zone = data.zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const schedules = data.schedules ?? [];

  const setPaused = (row: ScheduleRow, paused: boolean) =>
    withBusy(row.id, async () => {
      const result = await api.updateSchedule({ id: row.id, paused });
      if (!result.ok) return note(row.id, { text: explainApiError(paused ? 'pause it' : 'resume it', result.error), error: true });
      note(row.id, { text: paused ? 'Paused: it does not run until resumed.' : `Resumed: next run ${nextRunWords(result.value, zone, Date.now())}.`, error: false });
      data.reload();
    });

  const runNow = (row: ScheduleRow) =>
    withBusy(row.id, async () => {
      const result = await api.runScheduleNow({ id: row.id });
      if (!result.ok) return note(row.id, { text: explainApiError('run it now', result.error), error: true });
      note(row.id, { text: `Running now, in ${whereWords(row.where)}.`, error: false });
      data.reload();
    });

  const remove = (row: ScheduleRow) =>
    withBusy(row.id, async () => {
      const result = await api.removeSchedule({ id: row.id });
      if (!result.ok) return note(row.id, { text: explainApiError('delete it', result.error), error: true });
      if (editing === row.id) setEditing(null);
      setViewNote({ text: `“${row.name}” is deleted.`, error: false });
      data.reload();
      // Its card and buttons are gone: focus goes to a place that stays.
      newButton.current?.focus();
    });

  const onAction = (action: ScheduleRowAction, row: ScheduleRow) => {
    switch (action) {
      case 'pause':
      case 'resume':
        void setPaused(row, action === 'pause');
        return;
      case 'run':
        void runNow(row);
        return;
      case 'edit':
        note(row.id, null);
        setEditing((open) => (open === row.id ? null : row.id));
        return;
      case 'delete':
        setConfirming(row);
        return;
      case 'open':
        onOpenConversation(row.where.sessionKey);
        return;
    }
  };

  const loaded = data.schedules !== null;
  return (
    <section className="view schedules" aria-labelledby="schedules-title">
      <div className="view-head">
        <h2 id="schedules-title">Schedules</h2>
        <p className="muted">The assistant writes first: a prompt it answers, or a text, at the times you set, in the conversation you choose.</p>
      </div>
      <div className="toolbar">
        <button
          type="button"
          ref={newButton}
          aria-expanded={adding}
          disabled={!online && !adding}
          onClick={() => {
            setViewNote(null);
            setAdding((open) => !open);
          }}
          data-testid="new-schedule"
        >
          New schedule
        </button>
      </div>
      {adding && (
        <div className="card schedule-new">
          <ScheduleFormView
            api={api}
            sessions={sessions}
            onSaved={(row) => {
              setAdding(false);
              if (row) setViewNote({ text: `“${row.name}” is made: next run ${nextRunWords(row, zone, Date.now())}.`, error: false });
              data.reload();
              newButton.current?.focus();
            }}
            onClose={() => {
              setAdding(false);
              newButton.current?.focus();
            }}
          />
        </div>
      )}
      {viewNote && (
        <p role={viewNote.error ? 'alert' : 'status'} className={viewNote.error ? 'error-note' : 'ok-note'} data-testid="schedules-note">
          {viewNote.text}
        </p>
      )}
      <ErrorNote message={online && data.error ? explainApiError('read the schedules', data.error) : null} testId="schedules-error" />
      {loaded && schedules.length === 0 && !adding ? (
        <div className="empty" data-testid="schedules-empty">
          <p className="empty-title">No schedules yet.</p>
          <p className="muted">
            A schedule makes the assistant write first — a morning briefing every weekday, a reminder once next Tuesday — in this window&apos;s chat or any conversation.
          </p>
          <p className="muted">
            Make one with <strong>New schedule</strong>, or from any chat: <code>/every &lt;when&gt; &lt;prompt&gt;</code>, <code>/once &lt;when&gt; &lt;text&gt;</code>, and{' '}
            <code>/schedules</code> to list them.
          </p>
        </div>
      ) : (
        <ul className="schedule-list" aria-label={`Schedules, ${schedules.length}`}>
          {schedules.map((row) => (
            <li key={row.id} className={editing === row.id ? 'schedule-entry open' : 'schedule-entry'}>
              <ScheduleItem
                row={row}
                zone={zone}
                now={now}
                delivery={row.lastRun?.obligationId ? data.deliveries.get(row.lastRun.obligationId) : undefined}
                editing={editing === row.id}
                busy={busy.has(row.id)}
                note={notes.get(row.id)}
                onAction={onAction}
              >
                {editing === row.id && (
                  <ScheduleFormView
                    key={row.id}
                    api={api}
                    row={row}
                    sessions={sessions}
                    onSaved={(saved) => {
                      setEditing(null);
                      note(row.id, { text: saved ? 'Saved.' : 'Nothing changed.', error: false });
                      data.reload();
                    }}
                    onClose={() => setEditing(null)}
                  />
                )}
              </ScheduleItem>
            </li>
          ))}
        </ul>
      )}
      {confirming && (
        <ConfirmDialog
          title={`Delete “${confirming.name}”?`}
          body={`It will not run again (${confirming.when}, in ${whereWords(confirming.where)}). What it wrote stays in the conversation.`}
          confirmLabel="Delete"
          onCancel={() => setConfirming(null)}
          onConfirm={() => {
            const row = confirming;
            setConfirming(null);
            void remove(row);
          }}
        />
      )}
    </section>
  );
}
