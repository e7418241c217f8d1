import { useEffect, useState } from 'react';
import type { ConfigView, HomingApi } from '../../../../shared/api';
import { SecretField } from './SecretField';
import { FormMessage } from './FormMessage';
import { useSettingsForm } from './useSettingsForm';

interface TelegramFields {
  enabled: boolean;
  dmPolicy: string;
  allowFrom: string;
  groups: string;
}

const list = (text: string) => text.split(/[\s,]+/).filter(Boolean);

function telegramSection(config: Record<string, unknown>): Record<string, unknown> {
  return ((config.platforms as Record<string, unknown> | undefined)?.telegram ?? {}) as Record<string, unknown>;
}

function fieldsFrom(config: Record<string, unknown>): TelegramFields {
  const telegram = telegramSection(config);
  return {
    enabled: telegram.enabled !== false,
    dmPolicy: String(telegram.dmPolicy ?? 'pairing'),
    allowFrom: ((telegram.allowFrom as unknown[] | undefined) ?? []).map(String).join(', '),
    groups: Object.keys((telegram.groups as Record<string, unknown> | undefined) ?? {}).join(', '),
  };
}

function toSection(fields: TelegramFields, previous: Record<string, unknown>): Record<string, unknown> {
  // A group's own settings (who may address the agent, requireMention) are kept; new ones take the defaults.
  const before = (previous.groups as Record<string, unknown> | undefined) ?? {};
  const groups = Object.fromEntries(list(fields.groups).map((id) => [id, before[id] ?? {}]));
  return { ...previous, enabled: fields.enabled, dmPolicy: fields.dmPolicy, allowFrom: list(fields.allowFrom), groups };
}

/** Add or edit the Telegram bot; the token goes to the secret store, Test connection asks Telegram who the bot is. */
export function TelegramForm({ api, view, onSaved }: { api: HomingApi; view: ConfigView; onSaved: () => void }) {
  const config = view.config as Record<string, unknown>;
  const [fields, setFields] = useState<TelegramFields>(() => fieldsFrom(config));
  useEffect(() => setFields(fieldsFrom(view.config as Record<string, unknown>)), [view.config]);
  // What config.json itself says: a save writes only what the form changed (defaults stay implicit).
  const form = useSettingsForm(api, () => (view.written ?? {}) as Record<string, unknown>, view.error !== null);
  const set = <K extends keyof TelegramFields>(key: K, value: TelegramFields[K]) => setFields((previous) => ({ ...previous, [key]: value }));

  return (
    <form
      className="card settings"
      aria-labelledby="telegram-form-title"
      onSubmit={(event) => {
        event.preventDefault();
        void form
          .save((current) => ({ ...current, platforms: { ...(current.platforms as object), telegram: toSection(fields, telegramSection(current)) } }))
          .then((ok) => ok && onSaved());
      }}
    >
      <h3 id="telegram-form-title">Telegram</h3>
      <p className="muted">Create a bot with @BotFather (/newbot), paste its token here, then save.</p>
      <label className="check">
        <input type="checkbox" checked={fields.enabled} onChange={(event) => set('enabled', event.target.checked)} /> Connect to Telegram
      </label>
      <SecretField api={api} name="telegram.token" label="Bot token" isSet={view.secretsSet.includes('telegram.token')} onChanged={onSaved} />
      <div className="grid">
        <label>
          Who may write to the bot
          <select value={fields.dmPolicy} onChange={(event) => set('dmPolicy', event.target.value)}>
            <option value="pairing">People I approve (they get a pairing code)</option>
            <option value="allowlist">Only the ids listed here</option>
            <option value="open">Anyone (not recommended)</option>
          </select>
        </label>
        <label>
          Always allowed (Telegram user ids)
          <input value={fields.allowFrom} onChange={(event) => set('allowFrom', event.target.value)} placeholder="123456789" />
        </label>
        <label>
          Groups the agent answers in (chat ids)
          <input value={fields.groups} onChange={(event) => set('groups', event.target.value)} placeholder="-1001234567890" />
        </label>
      </div>
      <div className="actions">
        <button type="submit" disabled={form.busy}>
          Save Telegram
        </button>
        <button type="button" disabled={form.busy} onClick={() => void form.test('telegram', toSection(fields, telegramSection(config)))}>
          Test connection
        </button>
      </div>
      <FormMessage form={form} testId="telegram-form-message" path={view.path} onReplaced={onSaved} />
    </form>
  );
}
