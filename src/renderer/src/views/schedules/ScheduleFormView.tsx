import { useEffect, useId, useRef, useState } from 'react';
import type { ApiError, HomingApi, ScheduleRow, SessionSummary } from '../../../../shared/api';
import { useOnline } from '../../connection';
import { explainApiError } from '../../plain-words';
import {
  addParams,
  conversationChoices,
  conversationWords,
  EMPTY_FORM,
  fieldOfError,
  formFromRow,
  gatewayWords,
  updateParams,
  whereWords,
  WHEN_EXAMPLES,
  type FormField,
  type ScheduleForm,
} from './schedule-words';

interface ScheduleFormProps {
  readonly api: HomingApi;
  /** The schedule being edited; absent for a new one. */
  readonly row?: ScheduleRow;
  /** The conversations it may write in (besides this window's chat). */
  readonly sessions: readonly SessionSummary[];
  /** Saved: the view closes the form and says so. */
  readonly onSaved: (row: ScheduleRow | null) => void;
  readonly onClose: () => void;
}

/** The gateway's refusal in words: its own sentence for what it did not understand, else the usual explanation. */
function refusal(action: string, error: ApiError): string {
  if (error.code === 'bad-request') return `Could not ${action}: ${gatewayWords(error.message)}`;
  return explainApiError(action, error);
}

/**
 * "New schedule" and Edit: name, repeat, when (with examples), what (a prompt
 * or a fixed text), where, grace. A refusal is shown under the form, the field
 * at fault marked and focused; nothing typed is lost.
 */
export function ScheduleFormView({ api, row, sessions, onSaved, onClose }: ScheduleFormProps) {
  const editing = row !== undefined;
  const [form, setForm] = useState<ScheduleForm>(() => (row ? formFromRow(row) : EMPTY_FORM));
  const [error, setError] = useState<{ text: string; field: FormField | null } | null>(null);
  const [busy, setBusy] = useState(false);
  const online = useOnline();
  const id = useId();
  const ref = useRef<HTMLFormElement>(null);
  const choices = conversationChoices(sessions);
  const set = <K extends keyof ScheduleForm>(key: K, value: ScheduleForm[K]) => setForm((previous) => ({ ...previous, [key]: value }));

  // Opened: focus on its first field.
  useEffect(() => ref.current?.querySelector<HTMLElement>('input, select, textarea')?.focus(), []);
  // Refused: focus on the field at fault.
  useEffect(() => {
    if (error?.field) ref.current?.querySelector<HTMLElement>(`[data-field="${error.field}"]`)?.focus();
  }, [error]);

  const submit = async () => {
    setError(null);
    const action = editing ? 'save the schedule' : 'make the schedule';
    const checked = editing ? updateParams(row, form) : addParams(form);
    if (!checked.ok) return setError({ text: `Could not ${action}: ${checked.error}.`, field: checked.field });
    if (checked.params === null) return onSaved(null);
    setBusy(true);
    const result = editing ? await api.updateSchedule(checked.params as Parameters<HomingApi['updateSchedule']>[0]) : await api.addSchedule(checked.params as Parameters<HomingApi['addSchedule']>[0]);
    setBusy(false);
    if (!result.ok) return setError({ text: refusal(action, result.error), field: result.error.code === 'bad-request' ? fieldOfError(result.error.message) : null });
    onSaved(result.value);
  };

  const invalid = (field: FormField) => (error?.field === field ? true : undefined);
  /** A field's help, and the refusal when it is about this field (read out as focus lands on it). */
  const describedBy = (field: FormField, help?: string) => [help, error?.field === field ? `${id}-error` : undefined].filter(Boolean).join(' ') || undefined;
  const bodyLabel = form.action === 'prompt' ? 'Prompt to the agent' : 'Text to send';
  return (
    <form
      ref={ref}
      className="settings schedule-form"
      aria-labelledby={`${id}-title`}
      data-testid="schedule-form"
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <h3 id={`${id}-title`}>{editing ? `Edit “${row.name}”` : 'New schedule'}</h3>
      <div className="grid">
        <label>
          Name (optional)
          <input data-field="name" value={form.name} maxLength={100} aria-invalid={invalid('name')} aria-describedby={describedBy('name')} placeholder="Morning briefing" onChange={(event) => set('name', event.target.value)} />
        </label>
        <div className="field">
          <label>
            Where
            <select
              value={form.sessionKey}
              disabled={editing}
              aria-describedby={editing ? `${id}-where-help` : undefined}
              onChange={(event) => set('sessionKey', event.target.value)}
              data-testid="schedule-where"
            >
              <option value="">This window&apos;s chat</option>
              {editing && row.where.platform !== 'local' && !choices.some((choice) => choice.sessionKey === row.where.sessionKey) && (
                <option value={row.where.sessionKey}>{whereWords(row.where)}</option>
              )}
              {choices.map((session) => (
                <option key={session.sessionKey} value={session.sessionKey}>
                  {conversationWords(session)}
                </option>
              ))}
            </select>
          </label>
          {editing && (
            <span id={`${id}-where-help`} className="muted">
              A schedule keeps its conversation: to write elsewhere, make a new one.
            </span>
          )}
        </div>
      </div>
      <fieldset className="choice-row">
        <legend>Repeat</legend>
        <label className="check">
          <input type="radio" name={`${id}-repeat`} checked={form.repeat === 'every'} onChange={() => set('repeat', 'every')} /> Every… (repeats)
        </label>
        <label className="check">
          <input type="radio" name={`${id}-repeat`} checked={form.repeat === 'once'} onChange={() => set('repeat', 'once')} /> Once
        </label>
      </fieldset>
      <div className="field">
        <label>
          When
          <input
            data-field="when"
            value={form.when}
            maxLength={200}
            aria-invalid={invalid('when')}
            aria-describedby={describedBy('when', `${id}-when-help`)}
            placeholder={form.repeat === 'every' ? 'day at 08:00' : 'tomorrow at 9:00'}
            autoComplete="off"
            onChange={(event) => set('when', event.target.value)}
          />
        </label>
        <span id={`${id}-when-help`} className="muted">
          For example {WHEN_EXAMPLES[form.repeat]}.
        </span>
      </div>
      <fieldset className="choice-row">
        <legend>What</legend>
        <label className="check">
          <input type="radio" name={`${id}-action`} checked={form.action === 'prompt'} onChange={() => set('action', 'prompt')} /> Ask the agent (its answer is sent)
        </label>
        <label className="check">
          <input type="radio" name={`${id}-action`} checked={form.action === 'text'} onChange={() => set('action', 'text')} /> Send a fixed text
        </label>
      </fieldset>
      <label>
        {bodyLabel}
        <textarea
          data-field="body"
          rows={3}
          value={form.body}
          maxLength={10_000}
          aria-invalid={invalid('body')}
          aria-describedby={describedBy('body')}
          placeholder={form.action === 'prompt' ? 'Summarise the news and my calendar for today.' : 'Time to water the plants.'}
          onChange={(event) => set('body', event.target.value)}
        />
      </label>
      <div className="field grace">
        <label>
          Grace (minutes)
          <input
            data-field="grace"
            value={form.grace}
            inputMode="numeric"
            aria-invalid={invalid('grace')}
            aria-describedby={describedBy('grace', `${id}-grace-help`)}
            onChange={(event) => set('grace', event.target.value)}
          />
        </label>
        <span id={`${id}-grace-help`} className="muted">
          A run missed while this computer slept or Homing was closed still runs late within this many minutes; later, it is skipped and the conversation is told.
        </span>
      </div>
      <div className="actions">
        <button type="submit" disabled={busy || !online}>
          {editing ? 'Save schedule' : 'Make schedule'}
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
      {error && (
        <p role="alert" id={`${id}-error`} className="error-note" data-testid="schedule-form-error">
          {error.text}
        </p>
      )}
    </form>
  );
}
