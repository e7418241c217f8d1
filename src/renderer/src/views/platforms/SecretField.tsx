import { useState } from 'react';
import type { HomingApi } from '../../../../shared/api';
import type { SecretName } from '../../../../shared/platforms';
import { useOnline } from '../../connection';
import { explainApiError } from '../../plain-words';
import { secretWords } from './save-settings';

interface SecretFieldProps {
  readonly api: HomingApi;
  readonly name: SecretName;
  readonly label: string;
  readonly isSet: boolean;
  /** What is typed: the form's Save stores it (with the rest of the form), never into config.json. */
  readonly value: string;
  readonly onChange: (value: string) => void;
  /** After Clear removed the stored value. */
  readonly onCleared: () => void;
}

/**
 * A secret typed into a form, kept by the form's one Save in the secret store
 * and never shown back: only whether it is set. Typing over a set one replaces
 * it at Save; Clear removes it at once (it asks nothing else of the form).
 */
export function SecretField({ api, name, label, isSet, value, onChange, onCleared }: SecretFieldProps) {
  const [note, setNote] = useState<{ text: string; ok: boolean } | null>(null);
  const [busy, setBusy] = useState(false);
  const online = useOnline();
  const id = `secret-${name.replace('.', '-')}`;
  const clear = async () => {
    setBusy(true);
    const result = await api.setSecret({ name, value: null });
    setBusy(false);
    if (!result.ok) return setNote({ text: explainApiError(`clear ${secretWords(label)}`, result.error), ok: false });
    setNote({ text: `Cleared: ${secretWords(label)} is no longer in the secret store.`, ok: true });
    onCleared();
  };
  return (
    <div className="field secret">
      <label htmlFor={id}>
        {label} <span className="muted">({isSet ? 'set — type to replace, then save' : 'not set'})</span>
      </label>
      <div className="inline">
        <input
          id={id}
          type="password"
          autoComplete="off"
          value={value}
          onChange={(event) => {
            setNote(null);
            onChange(event.target.value);
          }}
          placeholder={isSet ? '••••••••' : ''}
        />
        {isSet && (
          <button type="button" aria-label={`Clear ${secretWords(label)}`} disabled={busy || !online} onClick={() => void clear()}>
            Clear
          </button>
        )}
      </div>
      {note && (
        <p role={note.ok ? 'status' : 'alert'} className={note.ok ? 'ok-note' : 'error-note'}>
          {note.text}
        </p>
      )}
    </div>
  );
}
