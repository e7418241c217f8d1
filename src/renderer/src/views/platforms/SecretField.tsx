import { useState } from 'react';
import type { HomingApi } from '../../../../shared/api';
import type { SecretName } from '../../../../shared/platforms';
import { useOnline } from '../../connection';
import { explainApiError } from '../../plain-words';

interface SecretFieldProps {
  readonly api: HomingApi;
  readonly name: SecretName;
  readonly label: string;
  readonly isSet: boolean;
  readonly onChanged: () => void;
}

/** A secret goes to the secret store, never into config.json, and is never shown back: only whether it is set. */
export function SecretField({ api, name, label, isSet, onChanged }: SecretFieldProps) {
  const [value, setValue] = useState('');
  const [note, setNote] = useState<{ text: string; ok: boolean } | null>(null);
  const online = useOnline();
  const id = `secret-${name.replace('.', '-')}`;
  const store = async (next: string | null) => {
    const result = await api.setSecret({ name, value: next });
    if (!result.ok) return setNote({ text: explainApiError('store the secret', result.error), ok: false });
    setValue('');
    setNote({ text: next === null ? 'Removed.' : 'Stored in the secret store.', ok: true });
    onChanged();
  };
  return (
    <div className="field secret">
      <label htmlFor={id}>
        {label} <span className="muted">({isSet ? 'set — type to replace' : 'not set'})</span>
      </label>
      <div className="inline">
        <input id={id} type="password" autoComplete="off" value={value} onChange={(event) => setValue(event.target.value)} placeholder={isSet ? '••••••••' : ''} />
        <button type="button" disabled={value === '' || !online} onClick={() => void store(value)}>
          Store
        </button>
        {isSet && (
          <button type="button" disabled={!online} onClick={() => void store(null)}>
            Remove
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
