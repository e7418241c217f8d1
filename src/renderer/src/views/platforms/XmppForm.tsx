import { useEffect, useState } from 'react';
import type { ConfigView, HomingApi } from '../../../../shared/api';
import { SecretField } from './SecretField';
import { FormMessage } from './FormMessage';
import { useSettingsForm } from './useSettingsForm';

interface XmppFields {
  enabled: boolean;
  jid: string;
  host: string;
  port: string;
  security: string;
  nick: string;
  dmPolicy: string;
  allowFrom: string;
  rooms: string;
}

const list = (text: string) => text.split(/[\s,]+/).filter(Boolean);

function xmppSection(config: Record<string, unknown>): Record<string, unknown> {
  return ((config.platforms as Record<string, unknown> | undefined)?.xmpp ?? {}) as Record<string, unknown>;
}

function fieldsFrom(config: Record<string, unknown>): XmppFields {
  const xmpp = xmppSection(config);
  return {
    enabled: xmpp.enabled !== false,
    jid: String(xmpp.jid ?? ''),
    host: String(xmpp.host ?? ''),
    port: xmpp.port === undefined ? '' : String(xmpp.port),
    security: String(xmpp.security ?? 'starttls'),
    nick: String(xmpp.nick ?? ''),
    dmPolicy: String(xmpp.dmPolicy ?? 'pairing'),
    allowFrom: ((xmpp.allowFrom as unknown[] | undefined) ?? []).map(String).join(', '),
    rooms: Object.keys((xmpp.rooms as Record<string, unknown> | undefined) ?? {}).join(', '),
  };
}

/** The section as the form has it; fields left empty stay out (their defaults apply), a room's own settings are kept. */
function toSection(fields: XmppFields, previous: Record<string, unknown>): Record<string, unknown> {
  const before = (previous.rooms as Record<string, unknown> | undefined) ?? {};
  const rooms = Object.fromEntries(list(fields.rooms).map((room) => [room, before[room] ?? {}]));
  const { host: _host, port: _port, nick: _nick, ...rest } = previous;
  const port = Number(fields.port);
  return {
    ...rest,
    enabled: fields.enabled,
    jid: fields.jid.trim(),
    ...(fields.host.trim() ? { host: fields.host.trim() } : {}),
    ...(fields.port.trim() ? { port: Number.isFinite(port) ? port : fields.port } : {}),
    security: fields.security,
    ...(fields.nick.trim() ? { nick: fields.nick.trim() } : {}),
    dmPolicy: fields.dmPolicy,
    allowFrom: list(fields.allowFrom),
    rooms,
  };
}

/** Add or edit the XMPP account; the password goes to the secret store, Test connection logs in and out. */
export function XmppForm({ api, view, onSaved }: { api: HomingApi; view: ConfigView; onSaved: () => void }) {
  const config = view.config as Record<string, unknown>;
  const [fields, setFields] = useState<XmppFields>(() => fieldsFrom(config));
  useEffect(() => setFields(fieldsFrom(view.config as Record<string, unknown>)), [view.config]);
  const form = useSettingsForm(api, () => (view.written ?? {}) as Record<string, unknown>, view.error !== null);
  const set = <K extends keyof XmppFields>(key: K, value: XmppFields[K]) => setFields((previous) => ({ ...previous, [key]: value }));

  return (
    <form
      className="card settings"
      aria-labelledby="xmpp-form-title"
      onSubmit={(event) => {
        event.preventDefault();
        void form
          .save((current) => ({ ...current, platforms: { ...(current.platforms as object), xmpp: toSection(fields, xmppSection(current)) } }))
          .then((ok) => ok && onSaved());
      }}
    >
      <h3 id="xmpp-form-title">XMPP</h3>
      <p className="muted">An account of its own for the agent (create one on your server), then save. Rooms are joined without their history.</p>
      <label className="check">
        <input type="checkbox" checked={fields.enabled} onChange={(event) => set('enabled', event.target.checked)} /> Connect to XMPP
      </label>
      <div className="grid">
        <label>
          Account (JID)
          <input value={fields.jid} onChange={(event) => set('jid', event.target.value)} placeholder="homing@example.org" autoComplete="username" />
        </label>
        <label>
          Server (default: the JID’s domain)
          <input value={fields.host} onChange={(event) => set('host', event.target.value)} placeholder="xmpp.example.org" />
        </label>
        <label>
          Port
          <input value={fields.port} inputMode="numeric" onChange={(event) => set('port', event.target.value)} placeholder="5222" />
        </label>
        <label>
          Encryption
          <select value={fields.security} onChange={(event) => set('security', event.target.value)}>
            <option value="starttls">STARTTLS (required)</option>
            <option value="direct-tls">Direct TLS (port 5223)</option>
            <option value="none">None (a server on this machine only)</option>
          </select>
        </label>
      </div>
      <SecretField api={api} name="xmpp.password" label="Password" isSet={view.secretsSet.includes('xmpp.password')} onChanged={onSaved} />
      <div className="grid">
        <label>
          Who may write to the agent
          <select value={fields.dmPolicy} onChange={(event) => set('dmPolicy', event.target.value)}>
            <option value="pairing">People I approve (they get a pairing code)</option>
            <option value="allowlist">Only the JIDs listed here</option>
            <option value="open">Anyone (not recommended)</option>
          </select>
        </label>
        <label>
          Always allowed (JIDs)
          <input value={fields.allowFrom} onChange={(event) => set('allowFrom', event.target.value)} placeholder="alice@example.org" />
        </label>
        <label>
          Rooms the agent joins and answers in
          <input value={fields.rooms} onChange={(event) => set('rooms', event.target.value)} placeholder="family@conference.example.org" />
        </label>
        <label>
          Nick in rooms (default: the JID’s name)
          <input value={fields.nick} onChange={(event) => set('nick', event.target.value)} placeholder="homing" />
        </label>
      </div>
      <div className="actions">
        <button type="submit" disabled={form.busy}>
          Save XMPP
        </button>
        <button type="button" disabled={form.busy} onClick={() => void form.test('xmpp', toSection(fields, xmppSection(config)))}>
          Test connection
        </button>
      </div>
      <FormMessage form={form} testId="xmpp-form-message" path={view.path} onReplaced={onSaved} />
    </form>
  );
}
