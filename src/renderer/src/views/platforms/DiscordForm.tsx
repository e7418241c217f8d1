import { useEffect, useState } from 'react';
import type { ConfigView, HomingApi } from '../../../../shared/api';
import { SecretField } from './SecretField';
import { FormMessage } from './FormMessage';
import { useSettingsForm } from './useSettingsForm';

interface DiscordFields {
  enabled: boolean;
  dmPolicy: string;
  allowFrom: string;
  guilds: string;
  /** Channels answered when the bot is mentioned or replied to. */
  channels: string;
  /** Channels answered at every message. */
  alwaysChannels: string;
}

const list = (text: string) => text.split(/[\s,]+/).filter(Boolean);

function discordSection(config: Record<string, unknown>): Record<string, unknown> {
  return ((config.platforms as Record<string, unknown> | undefined)?.discord ?? {}) as Record<string, unknown>;
}

function fieldsFrom(config: Record<string, unknown>): DiscordFields {
  const discord = discordSection(config);
  const channels = Object.entries((discord.channels as Record<string, { requireMention?: boolean }> | undefined) ?? {});
  return {
    enabled: discord.enabled !== false,
    dmPolicy: String(discord.dmPolicy ?? 'pairing'),
    allowFrom: ((discord.allowFrom as unknown[] | undefined) ?? []).map(String).join(', '),
    guilds: Object.keys((discord.guilds as Record<string, unknown> | undefined) ?? {}).join(', '),
    channels: channels.filter(([, entry]) => entry?.requireMention !== false).map(([id]) => id).join(', '),
    alwaysChannels: channels.filter(([, entry]) => entry?.requireMention === false).map(([id]) => id).join(', '),
  };
}

function toSection(fields: DiscordFields, previous: Record<string, unknown>): Record<string, unknown> {
  // A server's or channel's own settings (who may address the agent) are kept; new ones take the defaults.
  const guildsBefore = (previous.guilds as Record<string, Record<string, unknown>> | undefined) ?? {};
  const channelsBefore = (previous.channels as Record<string, Record<string, unknown>> | undefined) ?? {};
  const guilds = Object.fromEntries(list(fields.guilds).map((id) => [id, guildsBefore[id] ?? {}]));
  const channel = (id: string, always: boolean) => {
    const { requireMention: _old, ...rest } = channelsBefore[id] ?? {};
    return [id, always ? { ...rest, requireMention: false } : rest] as const;
  };
  const channels = Object.fromEntries([...list(fields.channels).map((id) => channel(id, false)), ...list(fields.alwaysChannels).map((id) => channel(id, true))]);
  return { ...previous, enabled: fields.enabled, dmPolicy: fields.dmPolicy, allowFrom: list(fields.allowFrom), guilds, channels };
}

/**
 * Add or edit the Discord bot; the token goes to the secret store, Test
 * connection asks Discord who the bot is (GET /users/@me) and answers with the
 * link that invites it and the intent to switch on.
 */
export function DiscordForm({ api, view, onSaved }: { api: HomingApi; view: ConfigView; onSaved: () => void }) {
  const config = view.config as Record<string, unknown>;
  const [fields, setFields] = useState<DiscordFields>(() => fieldsFrom(config));
  useEffect(() => setFields(fieldsFrom(view.config as Record<string, unknown>)), [view.config]);
  // What config.json itself says: a save writes only what the form changed (defaults stay implicit).
  const form = useSettingsForm(api, () => (view.written ?? {}) as Record<string, unknown>, view.error !== null);
  const set = <K extends keyof DiscordFields>(key: K, value: DiscordFields[K]) => setFields((previous) => ({ ...previous, [key]: value }));

  return (
    <form
      className="card settings"
      aria-labelledby="discord-form-title"
      onSubmit={(event) => {
        event.preventDefault();
        void form
          .save((current) => ({ ...current, platforms: { ...(current.platforms as object), discord: toSection(fields, discordSection(current)) } }))
          .then((ok) => ok && onSaved());
      }}
    >
      <h3 id="discord-form-title">Discord</h3>
      <p className="muted">
        In the Discord Developer Portal create an application, open Bot, reset and copy its token, and switch on “Message Content Intent”. Paste the token here, save,
        then Test connection: it gives the link that adds the bot to your server.
      </p>
      <label className="check">
        <input type="checkbox" checked={fields.enabled} onChange={(event) => set('enabled', event.target.checked)} /> Connect to Discord
      </label>
      <SecretField api={api} name="discord.token" label="Discord bot token" isSet={view.secretsSet.includes('discord.token')} onChanged={onSaved} />
      <div className="grid">
        <label>
          Who may send the bot direct messages
          <select value={fields.dmPolicy} onChange={(event) => set('dmPolicy', event.target.value)}>
            <option value="pairing">People I approve (they get a pairing code)</option>
            <option value="allowlist">Only the ids listed here</option>
            <option value="open">Anyone (not recommended)</option>
          </select>
        </label>
        <label>
          Always allowed (Discord user ids)
          <input value={fields.allowFrom} onChange={(event) => set('allowFrom', event.target.value)} placeholder="123456789012345678" />
        </label>
        <label>
          Servers the agent answers in when mentioned (server ids)
          <input value={fields.guilds} onChange={(event) => set('guilds', event.target.value)} placeholder="123456789012345678" />
        </label>
        <label>
          Channels the agent answers in when mentioned (channel ids)
          <input value={fields.channels} onChange={(event) => set('channels', event.target.value)} placeholder="123456789012345678" />
        </label>
        <label>
          Channels the agent answers every message in (channel ids)
          <input value={fields.alwaysChannels} onChange={(event) => set('alwaysChannels', event.target.value)} placeholder="123456789012345678" />
        </label>
      </div>
      <p className="muted">Ids: Discord → User Settings → Advanced → Developer Mode, then right-click a server, channel or person → Copy ID. A thread follows its channel.</p>
      <div className="actions">
        <button type="submit" disabled={form.busy}>
          Save Discord
        </button>
        <button type="button" disabled={form.busy} onClick={() => void form.test('discord', toSection(fields, discordSection(config)))}>
          Test connection
        </button>
      </div>
      <FormMessage form={form} testId="discord-form-message" path={view.path} onReplaced={onSaved} />
    </form>
  );
}
