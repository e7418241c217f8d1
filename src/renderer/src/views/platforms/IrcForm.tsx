import { useEffect, useMemo, useState } from 'react';
import type { ConfigView, HomingApi } from '../../../../shared/api';
import { FormMessage } from './FormMessage';
import { SecretField } from './SecretField';
import { useSettingsForm } from './useSettingsForm';

export interface IrcFields {
  enabled: boolean;
  host: string;
  port: string;
  tls: boolean;
  nick: string;
  channels: string;
  allow: string;
}

const list = (text: string) => text.split(/[\s,]+/).filter(Boolean);

function ircSection(config: Record<string, unknown>): Record<string, unknown> {
  return ((config.platforms as Record<string, unknown> | undefined)?.irc ?? {}) as Record<string, unknown>;
}

function fieldsFrom(config: Record<string, unknown>): IrcFields {
  const irc = ircSection(config);
  return {
    enabled: irc.enabled !== false,
    host: String(irc.host ?? ''),
    port: String(irc.port ?? 6697),
    tls: irc.tls !== false,
    nick: String(irc.nick ?? 'homing'),
    channels: ((irc.channels as string[] | undefined) ?? []).join(', '),
    // Account entries ({ nick, account }) are edited in config.json; the form shows and edits the nicks.
    allow: ((irc.allow as unknown[] | undefined) ?? []).filter((entry) => typeof entry === 'string').join(', '),
  };
}

/** The section's value for each field as typed. */
function fieldValues(fields: IrcFields, previous: Record<string, unknown>): Record<keyof IrcFields, unknown> {
  // The port is sent as typed when it is not a number, so the schema names the mistake.
  const port = /^\d+$/.test(fields.port) ? Number(fields.port) : fields.port;
  // Account entries ({ nick, account }) are not in the form: they are kept as they were.
  const accounts = ((previous.allow as unknown[] | undefined) ?? []).filter((entry) => typeof entry !== 'string');
  return {
    enabled: fields.enabled,
    host: fields.host.trim(),
    port,
    tls: fields.tls,
    nick: fields.nick.trim(),
    channels: list(fields.channels),
    allow: [...list(fields.allow), ...accounts],
  };
}

/** The schema has no default for these: a new IRC section always says them. */
const REQUIRED = new Set<keyof IrcFields>(['host', 'nick']);

/**
 * The IRC section to write: `written` (what config.json itself says) with the
 * fields the user changed from what was in force. A field left as shown is not
 * written unless the file had it already, so defaults stay implicit.
 * What the form does not show (requireAccount, realname, passwordEnv…) is kept.
 */
export function ircSectionToWrite(fields: IrcFields, shown: IrcFields, written: Record<string, unknown>): Record<string, unknown> {
  const now = fieldValues(fields, written);
  const before = fieldValues(shown, written);
  const section: Record<string, unknown> = { ...written };
  for (const key of Object.keys(now) as (keyof IrcFields)[]) {
    if (key in written || REQUIRED.has(key) || JSON.stringify(now[key]) !== JSON.stringify(before[key])) section[key] = now[key];
  }
  return section;
}

/** Add or edit the IRC platform; checked by the gateway against config.json's schema, which names the field at fault. */
export function IrcForm({ api, view, onSaved }: { api: HomingApi; view: ConfigView; onSaved: () => void }) {
  const config = view.config as Record<string, unknown>;
  const shown = useMemo(() => fieldsFrom(view.config as Record<string, unknown>), [view.config]);
  const [fields, setFields] = useState<IrcFields>(shown);
  useEffect(() => setFields(shown), [shown]);
  // Saves patch config.json's own contents, never the defaults filled in.
  const form = useSettingsForm(api, () => (view.written ?? {}) as Record<string, unknown>, view.error !== null);
  const set = <K extends keyof IrcFields>(key: K, value: IrcFields[K]) => setFields((previous) => ({ ...previous, [key]: value }));

  return (
    <form
      className="card settings"
      aria-labelledby="irc-form-title"
      onSubmit={(event) => {
        event.preventDefault();
        void form
          .save((current) => ({ ...current, platforms: { ...(current.platforms as object), irc: ircSectionToWrite(fields, shown, ircSection(current)) } }))
          .then((ok) => ok && onSaved());
      }}
    >
      <h3 id="irc-form-title">IRC</h3>
      <label className="check">
        <input type="checkbox" checked={fields.enabled} onChange={(event) => set('enabled', event.target.checked)} /> Connect to IRC
      </label>
      <div className="grid">
        <label>
          Server
          <input value={fields.host} aria-invalid={form.invalidField === 'host' || undefined} onChange={(event) => set('host', event.target.value)} placeholder="irc.libera.chat" />
        </label>
        <label>
          Port
          <input value={fields.port} aria-invalid={form.invalidField === 'port' || undefined} inputMode="numeric" onChange={(event) => set('port', event.target.value)} />
        </label>
        <label>
          Nick
          <input value={fields.nick} aria-invalid={form.invalidField === 'nick' || undefined} onChange={(event) => set('nick', event.target.value)} />
        </label>
        <label className="check">
          <input type="checkbox" checked={fields.tls} onChange={(event) => set('tls', event.target.checked)} /> TLS
        </label>
        <label>
          Channels
          <input value={fields.channels} aria-invalid={form.invalidField === 'channels' || undefined} onChange={(event) => set('channels', event.target.value)} placeholder="#homing, #family" />
        </label>
        <label>
          Who may talk to the agent (nicks)
          <input value={fields.allow} aria-invalid={form.invalidField === 'allow' || undefined} onChange={(event) => set('allow', event.target.value)} placeholder="your nick" />
        </label>
      </div>
      <SecretField api={api} name="irc.password" label="Server password" isSet={view.secretsSet.includes('irc.password')} onChanged={onSaved} />
      <div className="actions">
        <button type="submit" disabled={form.busy}>
          Save IRC
        </button>
        <button type="button" disabled={form.busy} onClick={() => void form.test('irc', { ...ircSection(config), ...fieldValues(fields, ircSection(config)) })}>
          Test connection
        </button>
      </div>
      <FormMessage form={form} testId="irc-form-message" path={view.path} onReplaced={onSaved} />
    </form>
  );
}
