import { useEffect, useState } from 'react';
import type { ConfigView, HomingApi } from '../../../../shared/api';
import { FormMessage } from './FormMessage';
import { SecretField } from './SecretField';
import { useSettingsForm } from './useSettingsForm';

interface ServerFields {
  host: string;
  port: string;
  security: string;
  user: string;
}

interface EmailFields {
  enabled: boolean;
  address: string;
  name: string;
  imap: ServerFields;
  smtp: ServerFields;
  folder: string;
  allowFrom: string;
  requireAuthenticated: boolean;
  trustedAuthServId: string;
}

const list = (text: string) => text.split(/[\s,]+/).filter(Boolean);

function emailSection(config: Record<string, unknown>): Record<string, unknown> {
  return ((config.platforms as Record<string, unknown> | undefined)?.email ?? {}) as Record<string, unknown>;
}

function serverFields(section: unknown, security: string): ServerFields {
  const server = (section ?? {}) as Record<string, unknown>;
  return { host: String(server.host ?? ''), port: server.port === undefined ? '' : String(server.port), security: String(server.security ?? security), user: String(server.user ?? '') };
}

function fieldsFrom(config: Record<string, unknown>): EmailFields {
  const email = emailSection(config);
  return {
    enabled: email.enabled !== false,
    address: String(email.address ?? ''),
    name: String(email.name ?? ''),
    imap: serverFields(email.imap, 'tls'),
    smtp: serverFields(email.smtp, 'starttls'),
    folder: String(email.folder ?? 'INBOX'),
    allowFrom: ((email.allowFrom as unknown[] | undefined) ?? []).map(String).join(', '),
    requireAuthenticated: email.requireAuthenticated === true,
    trustedAuthServId: [email.trustedAuthServId ?? []].flat().map(String).join(', '),
  };
}

function serverSection(fields: ServerFields, previous: unknown): Record<string, unknown> {
  const { port: _port, user: _user, ...kept } = (previous ?? {}) as Record<string, unknown>;
  // A port that is not a number is sent as typed, so the schema names the mistake.
  const port = fields.port.trim() === '' ? undefined : /^\d+$/.test(fields.port.trim()) ? Number(fields.port.trim()) : fields.port;
  return { ...kept, host: fields.host.trim(), security: fields.security, ...(port !== undefined ? { port } : {}), ...(fields.user.trim() ? { user: fields.user.trim() } : {}) };
}

function toSection(fields: EmailFields, previous: Record<string, unknown>): Record<string, unknown> {
  const { name: _name, trustedAuthServId: _trusted, ...kept } = previous;
  const trusted = list(fields.trustedAuthServId);
  return {
    ...kept,
    enabled: fields.enabled,
    address: fields.address.trim(),
    ...(fields.name.trim() ? { name: fields.name.trim() } : {}),
    imap: serverSection(fields.imap, previous.imap),
    smtp: serverSection(fields.smtp, previous.smtp),
    folder: fields.folder.trim() || 'INBOX',
    allowFrom: list(fields.allowFrom),
    requireAuthenticated: fields.requireAuthenticated,
    ...(trusted.length > 0 ? { trustedAuthServId: trusted } : {}),
  };
}

function ServerInputs({ which, fields, onChange }: { which: 'IMAP' | 'SMTP'; fields: ServerFields; onChange: (next: ServerFields) => void }) {
  const placeholder = which === 'IMAP' ? 'imap.example.org' : 'smtp.example.org';
  const defaultPort = which === 'IMAP' ? (fields.security === 'tls' ? '993' : '143') : fields.security === 'tls' ? '465' : '587';
  return (
    <fieldset className="grid">
      <legend>{which === 'IMAP' ? 'Incoming mail (IMAP)' : 'Outgoing mail (SMTP)'}</legend>
      <label>
        {which} server
        <input value={fields.host} onChange={(event) => onChange({ ...fields, host: event.target.value })} placeholder={placeholder} />
      </label>
      <label>
        Port
        <input value={fields.port} inputMode="numeric" onChange={(event) => onChange({ ...fields, port: event.target.value })} placeholder={defaultPort} />
      </label>
      <label>
        Encryption
        <select value={fields.security} onChange={(event) => onChange({ ...fields, security: event.target.value })}>
          <option value="tls">TLS</option>
          <option value="starttls">STARTTLS</option>
          <option value="none">None (only on this machine)</option>
        </select>
      </label>
      <label>
        Login name
        <input value={fields.user} onChange={(event) => onChange({ ...fields, user: event.target.value })} placeholder="the address" />
      </label>
    </fieldset>
  );
}

/** Add or edit the mailbox; the password goes to the secret store, Test connection logs in to IMAP and SMTP. */
export function EmailForm({ api, view, onSaved }: { api: HomingApi; view: ConfigView; onSaved: () => void }) {
  const config = view.config as Record<string, unknown>;
  const [fields, setFields] = useState<EmailFields>(() => fieldsFrom(config));
  useEffect(() => setFields(fieldsFrom(view.config as Record<string, unknown>)), [view.config]);
  const form = useSettingsForm(api, () => (view.written ?? {}) as Record<string, unknown>, view.error !== null);
  const set = <K extends keyof EmailFields>(key: K, value: EmailFields[K]) => setFields((previous) => ({ ...previous, [key]: value }));

  return (
    <form
      className="card settings"
      aria-labelledby="email-form-title"
      onSubmit={(event) => {
        event.preventDefault();
        void form
          .save((current) => ({ ...current, platforms: { ...(current.platforms as object), email: toSection(fields, emailSection(current)) } }))
          .then((ok) => ok && onSaved());
      }}
    >
      <h3 id="email-form-title">Email</h3>
      <p className="muted">A mailbox of its own for the assistant is best: it answers new mail from the senders listed here, one email per reply, in the same thread.</p>
      <label className="check">
        <input type="checkbox" checked={fields.enabled} onChange={(event) => set('enabled', event.target.checked)} /> Read and answer email
      </label>
      <div className="grid">
        <label>
          Address
          <input value={fields.address} onChange={(event) => set('address', event.target.value)} placeholder="assistant@example.org" />
        </label>
        <label>
          Name on replies
          <input value={fields.name} onChange={(event) => set('name', event.target.value)} placeholder="Assistant" />
        </label>
      </div>
      <SecretField api={api} name="email.password" label="Mailbox password" isSet={view.secretsSet.includes('email.password')} onChanged={onSaved} />
      <ServerInputs which="IMAP" fields={fields.imap} onChange={(next) => set('imap', next)} />
      <ServerInputs which="SMTP" fields={fields.smtp} onChange={(next) => set('smtp', next)} />
      <div className="grid">
        <label>
          Folder to read
          <input value={fields.folder} onChange={(event) => set('folder', event.target.value)} placeholder="INBOX" />
        </label>
        <label>
          Answer mail from (addresses)
          <input value={fields.allowFrom} onChange={(event) => set('allowFrom', event.target.value)} placeholder="you@example.org" />
        </label>
      </div>
      <label className="check">
        <input type="checkbox" checked={fields.requireAuthenticated} onChange={(event) => set('requireAuthenticated', event.target.checked)} /> Answer only mail the server verified
        (SPF or DKIM pass)
      </label>
      <label>
        Mail server trusted to verify senders
        <input value={fields.trustedAuthServId} onChange={(event) => set('trustedAuthServId', event.target.value)} placeholder="mx.example.org (Gmail: known)" />
        <span className="muted">
          The first word of the Authentication-Results header your mail server adds (open a message&rsquo;s source). Without it no sender counts as verified: anyone can write that header.
        </span>
      </label>
      <div className="actions">
        <button type="submit" disabled={form.busy}>
          Save Email
        </button>
        <button type="button" disabled={form.busy} onClick={() => void form.test('email', toSection(fields, emailSection(config)))}>
          Test connection
        </button>
      </div>
      <FormMessage form={form} testId="email-form-message" path={view.path} onReplaced={onSaved} />
    </form>
  );
}
