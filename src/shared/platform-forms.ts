/**
 * Each platform's settings form in the window, as data: which fields of
 * config.json's `platforms.<name>` section it shows, in what words, and how
 * each reads and writes its value. The window renders every platform's form
 * from this (PlatformForm.tsx); the help text is the forms' own, word for word.
 *
 * Pure data: the window's bundle imports it, so nothing here may touch Node.
 */

interface FieldBase {
  /** Where the value lives in the platform's section (`nick`, `imap.host`). */
  readonly key: string;
  /** The field's label on screen; also its name in a schema error ("Nick must be…"). */
  readonly label: string;
  readonly placeholder?: string;
  /** Help under the field, inside its label. */
  readonly help?: string;
  /**
   * Written at every save, even when left as shown: the schema has no default
   * for it. Any other field is written only once the user changes it (or the
   * file has it already), so defaults stay implicit.
   */
  readonly required?: boolean;
}

/** One line of text, trimmed. `optional`: left empty, the key is left out (its default applies). */
export interface TextField extends FieldBase {
  readonly kind: 'text';
  readonly initial?: string;
  readonly optional?: boolean;
  readonly autoComplete?: 'username';
}

/**
 * A port number. Left empty, the key is left out (the default port applies);
 * anything but digits is written as typed, so the schema names the mistake.
 */
export interface PortField extends FieldBase {
  readonly kind: 'port';
  readonly initial?: number;
  /** The default port as the placeholder, by another field's value (a mail server's port follows its encryption). */
  readonly placeholderAfter?: { readonly key: string; readonly values: Readonly<Record<string, string>> };
}

export interface CheckboxField extends FieldBase {
  readonly kind: 'checkbox';
  /** Shown when config.json says nothing (the schema's default). */
  readonly initial: boolean;
}

export interface SelectField extends FieldBase {
  readonly kind: 'select';
  readonly initial: string;
  readonly options: readonly { readonly value: string; readonly label: string }[];
}

/**
 * A list of strings, typed as one line separated by commas or spaces. Entries
 * that are objects (an IRC `{ nick, account }`) are not shown and are kept as
 * they were. `optional`: left empty, the key is left out.
 */
export interface ListField extends FieldBase {
  readonly kind: 'list';
  readonly optional?: boolean;
}

/**
 * Ids kept as the keys of an object (`groups`, `rooms`, `channels`), typed as a
 * list: an id already there keeps its own settings (who may address the agent…),
 * a new one starts with the defaults. `answers` splits one object between two
 * fields by the entries' `requireMention` (Discord's channels).
 */
export interface IdsField extends FieldBase {
  readonly kind: 'ids';
  readonly answers?: 'when-mentioned' | 'every-message';
}

export type FormField = TextField | PortField | CheckboxField | SelectField | ListField | IdsField;

/** A form's parts, top to bottom. */
export type FormPart =
  /** A paragraph of help. */
  | { readonly part: 'note'; readonly text: string }
  /** One field on a line of its own. */
  | { readonly part: 'field'; readonly field: FormField }
  /** Fields side by side; with a legend, a group of its own (a mail server). */
  | { readonly part: 'grid'; readonly legend?: string; readonly fields: readonly FormField[] }
  /** A secret, saved to the secret store and never shown back; one of the platform's `secrets`. */
  | { readonly part: 'secret'; readonly name: string; readonly label: string };

/** A platform's settings form: its parts, top to bottom as the window shows them. */
export interface FormDescription {
  readonly parts: readonly FormPart[];
}

/** Every field of a form, in order. */
export function formFields(form: FormDescription): FormField[] {
  return form.parts.flatMap((part) => (part.part === 'field' ? [part.field] : part.part === 'grid' ? part.fields : []));
}

/** The parts, briefly (each form below reads top to bottom as the window shows it). */
const note = (text: string): FormPart => ({ part: 'note', text });
const field = (one: FormField): FormPart => ({ part: 'field', field: one });
const grid = (...fields: FormField[]): FormPart => ({ part: 'grid', fields });
const secret = (name: string, label: string): FormPart => ({ part: 'secret', name, label });
const enabled = (label: string): FormPart => field({ key: 'enabled', kind: 'checkbox', label, initial: true });

/** Who may write to the bot directly: `dmPolicy`, in each platform's words. */
const dmPolicy = (label: string, listed: string): SelectField => ({
  key: 'dmPolicy',
  kind: 'select',
  label,
  initial: 'pairing',
  options: [
    { value: 'pairing', label: 'People I approve (they get a pairing code)' },
    { value: 'allowlist', label: listed },
    { value: 'open', label: 'Anyone (not recommended)' },
  ],
});

const MAIL_SECURITY_OPTIONS = [
  { value: 'tls', label: 'TLS' },
  { value: 'starttls', label: 'STARTTLS' },
  { value: 'none', label: 'None (only on this machine)' },
];

/** An email server's group: `imap` or `smtp`, with its default encryption and the default port for each. */
function mailServer(key: 'imap' | 'smtp', legend: string, security: string, ports: Record<string, string>): FormPart {
  const which = key.toUpperCase();
  return {
    part: 'grid',
    legend,
    fields: [
      { key: `${key}.host`, kind: 'text', label: `${which} server`, placeholder: `${key}.example.org`, required: true },
      { key: `${key}.port`, kind: 'port', label: 'Port', placeholderAfter: { key: `${key}.security`, values: ports } },
      { key: `${key}.security`, kind: 'select', label: 'Encryption', initial: security, options: MAIL_SECURITY_OPTIONS },
      { key: `${key}.user`, kind: 'text', label: 'Login name', placeholder: 'the address', optional: true },
    ],
  };
}

export const TELEGRAM_FORM: FormDescription = {
  parts: [
    note('Create a bot with @BotFather (/newbot), paste its token here, then save.'),
    enabled('Connect to Telegram'),
    secret('telegram.token', 'Bot token'),
    grid(
      dmPolicy('Who may write to the bot', 'Only the ids listed here'),
      { key: 'allowFrom', kind: 'list', label: 'Always allowed (Telegram user ids)', placeholder: '123456789' },
      { key: 'groups', kind: 'ids', label: 'Groups the agent answers in (chat ids)', placeholder: '-1001234567890' },
    ),
  ],
};

export const MATRIX_FORM: FormDescription = {
  parts: [
    note(
      'Make an account for the bot on your homeserver, then enter its access token (Element: Settings → Help & About → Access token) or its ' +
      'password. Rooms with end-to-end encryption are not supported yet.'
    ),
    enabled('Connect to Matrix'),
    grid(
      { key: 'homeserver', kind: 'text', label: 'Homeserver URL', placeholder: 'https://matrix.example.org', required: true },
      { key: 'user', kind: 'text', label: 'Bot user', placeholder: '@homing:example.org', required: true },
    ),
    // Either one: the gateway logs in with the password when there is no access token.
    secret('matrix.accessToken', 'Access token'),
    secret('matrix.password', 'Password (if no access token)'),
    grid(
      dmPolicy('Who may write to the bot', 'Only the users listed here'),
      { key: 'allowFrom', kind: 'list', label: 'Always allowed (Matrix user ids)', placeholder: '@alice:example.org' },
      { key: 'rooms', kind: 'ids', label: 'Rooms with their own settings (room ids)', placeholder: '!AbCdEf:example.org' },
    ),
  ],
};

const DISCORD_ID = '123456789012345678';

export const DISCORD_FORM: FormDescription = {
  parts: [
    note(
      'In the Discord Developer Portal create an application, open Bot, reset and copy its token, and switch on “Message Content Intent”. Paste the token here, save, ' +
      'then Test connection: it gives the link that adds the bot to your server.'
    ),
    enabled('Connect to Discord'),
    secret('discord.token', 'Discord bot token'),
    grid(
      dmPolicy('Who may send the bot direct messages', 'Only the ids listed here'),
      { key: 'allowFrom', kind: 'list', label: 'Always allowed (Discord user ids)', placeholder: DISCORD_ID },
      { key: 'guilds', kind: 'ids', label: 'Servers the agent answers in when mentioned (server ids)', placeholder: DISCORD_ID },
      { key: 'channels', kind: 'ids', answers: 'when-mentioned', label: 'Channels the agent answers in when mentioned (channel ids)', placeholder: DISCORD_ID },
      { key: 'channels', kind: 'ids', answers: 'every-message', label: 'Channels the agent answers every message in (channel ids)', placeholder: DISCORD_ID },
    ),
    note('Ids: Discord → User Settings → Advanced → Developer Mode, then right-click a server, channel or person → Copy ID. A thread follows its channel.'),
  ],
};

const SLACK_CHANNEL_ID = 'C0123456789';

export const SLACK_FORM: FormDescription = {
  parts: [
    note(
      'At api.slack.com/apps create an app “From a manifest” (docs/platforms.md has the one to paste), install it to your workspace, then paste its ' +
      'app-level token (Basic Information → App-Level Tokens, scope connections:write: xapp-…) and its bot token (OAuth & Permissions: xoxb-…) here, and save.'
    ),
    enabled('Connect to Slack'),
    secret('slack.appToken', 'App-level token (xapp-…)'),
    secret('slack.botToken', 'Bot token (xoxb-…)'),
    grid(
      dmPolicy('Who may send the bot direct messages', 'Only the ids listed here'),
      { key: 'allowFrom', kind: 'list', label: 'Always allowed (Slack member ids)', placeholder: 'U0123456789' },
      { key: 'channels', kind: 'ids', answers: 'when-mentioned', label: 'Channels the agent answers in when mentioned (channel ids)', placeholder: SLACK_CHANNEL_ID },
      { key: 'channels', kind: 'ids', answers: 'every-message', label: 'Channels the agent answers every message in (channel ids)', placeholder: SLACK_CHANNEL_ID },
    ),
    note('Ids: a person’s profile → ⋮ → Copy member ID; a channel’s name → About → Channel ID at the bottom. Invite the bot into a channel with /invite @your-app. A thread follows its channel.'),
  ],
};

export const XMPP_FORM: FormDescription = {
  parts: [
    note('An account of its own for the agent (create one on your server), then save. Rooms are joined without their history.'),
    enabled('Connect to XMPP'),
    grid(
      { key: 'jid', kind: 'text', label: 'Account (JID)', placeholder: 'homing@example.org', autoComplete: 'username', required: true },
      { key: 'host', kind: 'text', label: 'Server (default: the JID’s domain)', placeholder: 'xmpp.example.org', optional: true },
      { key: 'port', kind: 'port', label: 'Port', placeholder: '5222' },
      {
        key: 'security',
        kind: 'select',
        label: 'Encryption',
        initial: 'starttls',
        options: [
          { value: 'starttls', label: 'STARTTLS (required)' },
          { value: 'direct-tls', label: 'Direct TLS (port 5223)' },
          { value: 'none', label: 'None (a server on this machine only)' },
        ],
      },
    ),
    secret('xmpp.password', 'Password'),
    grid(
      dmPolicy('Who may write to the agent', 'Only the JIDs listed here'),
      { key: 'allowFrom', kind: 'list', label: 'Always allowed (JIDs)', placeholder: 'alice@example.org' },
      { key: 'rooms', kind: 'ids', label: 'Rooms the agent joins and answers in', placeholder: 'family@conference.example.org' },
      { key: 'nick', kind: 'text', label: 'Nick in rooms (default: the JID’s name)', placeholder: 'homing', optional: true },
    ),
  ],
};

/** What the IRC form does not show (requireAccount, pairing, realname, passwordEnv…) is kept as config.json has it. */
const SIGNAL_GROUP_ID = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/abcde=';

export const SIGNAL_FORM: FormDescription = {
  parts: [
    note(
      'Homing talks to signal-cli, which you install and link to your phone (signal-cli link -n Homing, then scan the QR code in Signal → Settings → Linked devices). ' +
      'Start its daemon with: signal-cli -a +YOUR_NUMBER daemon --tcp 127.0.0.1:7583 --receive-mode manual — then save and Test connection.'
    ),
    enabled('Connect to Signal'),
    grid(
      { key: 'daemon', kind: 'text', label: 'signal-cli daemon (tcp://host:port or unix:/path)', placeholder: 'tcp://127.0.0.1:7583', optional: true },
      { key: 'account', kind: 'text', label: 'Signal number signal-cli is linked to', placeholder: '+4915112345678', required: true },
    ),
    grid(
      dmPolicy('Who may write to the agent', 'Only the numbers listed here'),
      { key: 'allowFrom', kind: 'list', label: 'Always allowed (phone numbers or Signal UUIDs)', placeholder: '+4915112345678' },
      { key: 'groups', kind: 'ids', answers: 'when-mentioned', label: 'Groups the agent answers in when mentioned or replied to (group ids)', placeholder: SIGNAL_GROUP_ID },
      { key: 'groups', kind: 'ids', answers: 'every-message', label: 'Groups the agent answers every message in (group ids)', placeholder: SIGNAL_GROUP_ID },
    ),
    note('Group ids: signal-cli -a +YOUR_NUMBER listGroups (44 characters ending in =).'),
  ],
};

export const IRC_FORM: FormDescription = {
  parts: [
    enabled('Connect to IRC'),
    grid(
      { key: 'host', kind: 'text', label: 'Server', placeholder: 'irc.libera.chat', required: true },
      { key: 'port', kind: 'port', label: 'Port', initial: 6697 },
      { key: 'nick', kind: 'text', label: 'Nick', initial: 'homing', required: true },
      { key: 'tls', kind: 'checkbox', label: 'TLS', initial: true },
      { key: 'channels', kind: 'list', label: 'Channels', placeholder: '#homing, #family' },
      // Account entries ({ nick, account }) are edited in config.json; the form shows and edits the nicks.
      { key: 'allow', kind: 'list', label: 'Who may talk to the agent (nicks)', placeholder: 'your nick' },
    ),
    secret('irc.password', 'Server password'),
  ],
};

export const EMAIL_FORM: FormDescription = {
  parts: [
    note('A mailbox of its own for the assistant is best: it answers new mail from the senders listed here, one email per reply, in the same thread.'),
    enabled('Read and answer email'),
    grid(
      { key: 'address', kind: 'text', label: 'Address', placeholder: 'assistant@example.org', required: true },
      { key: 'name', kind: 'text', label: 'Name on replies', placeholder: 'Assistant', optional: true },
    ),
    secret('email.password', 'Mailbox password'),
    mailServer('imap', 'Incoming mail (IMAP)', 'tls', { tls: '993', starttls: '143', none: '143' }),
    mailServer('smtp', 'Outgoing mail (SMTP)', 'starttls', { tls: '465', starttls: '587', none: '587' }),
    grid(
      { key: 'folder', kind: 'text', label: 'Folder to read', initial: 'INBOX', placeholder: 'INBOX', optional: true },
      { key: 'allowFrom', kind: 'list', label: 'Answer mail from (addresses)', placeholder: 'you@example.org' },
    ),
    field({ key: 'requireAuthenticated', kind: 'checkbox', label: 'Answer only mail the server verified (SPF or DKIM pass)', initial: false }),
    field({
      key: 'trustedAuthServId',
      kind: 'list',
      label: 'Mail server trusted to verify senders',
      placeholder: 'mx.example.org (Gmail: known)',
      optional: true,
      help: 'The first word of the Authentication-Results header your mail server adds (open a message’s source). Without it no sender counts as verified: anyone can write that header.',
    }),
  ],
};
