import { useEffect, useState } from 'react';
import type { ConfigView, HomingApi } from '../../../../shared/api';
import { SecretField } from './SecretField';
import { FormMessage } from './FormMessage';
import { useSettingsForm } from './useSettingsForm';

interface MatrixFields {
  enabled: boolean;
  homeserver: string;
  user: string;
  dmPolicy: string;
  allowFrom: string;
  rooms: string;
}

const list = (text: string) => text.split(/[\s,]+/).filter(Boolean);

function matrixSection(config: Record<string, unknown>): Record<string, unknown> {
  return ((config.platforms as Record<string, unknown> | undefined)?.matrix ?? {}) as Record<string, unknown>;
}

function fieldsFrom(config: Record<string, unknown>): MatrixFields {
  const matrix = matrixSection(config);
  return {
    enabled: matrix.enabled !== false,
    homeserver: String(matrix.homeserver ?? ''),
    user: String(matrix.user ?? ''),
    dmPolicy: String(matrix.dmPolicy ?? 'pairing'),
    allowFrom: ((matrix.allowFrom as unknown[] | undefined) ?? []).map(String).join(', '),
    rooms: Object.keys((matrix.rooms as Record<string, unknown> | undefined) ?? {}).join(', '),
  };
}

function toSection(fields: MatrixFields, previous: Record<string, unknown>): Record<string, unknown> {
  // A room's own settings (who may address the agent, requireMention) are kept; new ones take the defaults.
  const before = (previous.rooms as Record<string, unknown> | undefined) ?? {};
  const rooms = Object.fromEntries(list(fields.rooms).map((id) => [id, before[id] ?? {}]));
  return {
    ...previous,
    enabled: fields.enabled,
    homeserver: fields.homeserver.trim(),
    user: fields.user.trim(),
    dmPolicy: fields.dmPolicy,
    allowFrom: list(fields.allowFrom),
    rooms,
  };
}

/**
 * Add or edit the Matrix account; the access token or password goes to the
 * secret store, Test connection asks the homeserver who the token belongs to
 * (`/account/whoami`). The rooms the bot is in are listed on its card.
 */
export function MatrixForm({ api, view, onSaved }: { api: HomingApi; view: ConfigView; onSaved: () => void }) {
  const config = view.config as Record<string, unknown>;
  const [fields, setFields] = useState<MatrixFields>(() => fieldsFrom(config));
  // Only a change of the saved section resets the form: storing a secret reloads the config, and must not wipe what is being typed.
  const saved = JSON.stringify(matrixSection(config));
  useEffect(() => setFields(fieldsFrom(view.config as Record<string, unknown>)), [saved]);
  const form = useSettingsForm(api, () => (view.written ?? {}) as Record<string, unknown>, view.error !== null);
  const set = <K extends keyof MatrixFields>(key: K, value: MatrixFields[K]) => setFields((previous) => ({ ...previous, [key]: value }));

  return (
    <form
      className="card settings"
      aria-labelledby="matrix-form-title"
      onSubmit={(event) => {
        event.preventDefault();
        void form
          .save((current) => ({ ...current, platforms: { ...(current.platforms as object), matrix: toSection(fields, matrixSection(current)) } }))
          .then((ok) => ok && onSaved());
      }}
    >
      <h3 id="matrix-form-title">Matrix</h3>
      <p className="muted">
        Make an account for the bot on your homeserver, then enter its access token (Element: Settings → Help &amp; About → Access token) or its
        password. Rooms with end-to-end encryption are not supported yet.
      </p>
      <label className="check">
        <input type="checkbox" checked={fields.enabled} onChange={(event) => set('enabled', event.target.checked)} /> Connect to Matrix
      </label>
      <div className="grid">
        <label>
          Homeserver URL
          <input value={fields.homeserver} onChange={(event) => set('homeserver', event.target.value)} placeholder="https://matrix.example.org" />
        </label>
        <label>
          Bot user
          <input value={fields.user} onChange={(event) => set('user', event.target.value)} placeholder="@homing:example.org" />
        </label>
      </div>
      <SecretField api={api} name="matrix.accessToken" label="Access token" isSet={view.secretsSet.includes('matrix.accessToken')} onChanged={onSaved} />
      <SecretField api={api} name="matrix.password" label="Password (if no access token)" isSet={view.secretsSet.includes('matrix.password')} onChanged={onSaved} />
      <div className="grid">
        <label>
          Who may write to the bot
          <select value={fields.dmPolicy} onChange={(event) => set('dmPolicy', event.target.value)}>
            <option value="pairing">People I approve (they get a pairing code)</option>
            <option value="allowlist">Only the users listed here</option>
            <option value="open">Anyone (not recommended)</option>
          </select>
        </label>
        <label>
          Always allowed (Matrix user ids)
          <input value={fields.allowFrom} onChange={(event) => set('allowFrom', event.target.value)} placeholder="@alice:example.org" />
        </label>
        <label>
          Rooms with their own settings (room ids)
          <input value={fields.rooms} onChange={(event) => set('rooms', event.target.value)} placeholder="!AbCdEf:example.org" />
        </label>
      </div>
      <div className="actions">
        <button type="submit" disabled={form.busy}>
          Save Matrix
        </button>
        <button type="button" disabled={form.busy} onClick={() => void form.test('matrix', toSection(fields, matrixSection(config)))}>
          Test connection
        </button>
      </div>
      <FormMessage form={form} testId="matrix-form-message" path={view.path} onReplaced={onSaved} />
    </form>
  );
}
