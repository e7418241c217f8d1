/**
 * The chat platforms, as the window and the gateway both see them: one entry
 * per platform, in the order the window shows them. The gateway's registry
 * (src/main/gateway/platforms/registry.ts) holds one module per entry here and
 * takes its name, label, secret names and pairing support from it, so the two
 * cannot drift apart (a missing or extra module is a type error there).
 *
 * Pure data: the window's bundle imports it, so nothing here may touch Node.
 */

import { DISCORD_FORM, EMAIL_FORM, IRC_FORM, MATRIX_FORM, SIGNAL_FORM, SLACK_FORM, TELEGRAM_FORM, XMPP_FORM, type FormDescription } from './platform-forms';

export interface PlatformInfo {
  /** The platform's name in session keys, the ledger, config.json's `platforms` and the API. */
  readonly name: string;
  /** Its name on a card or a form title ("IRC", "Email"). */
  readonly label: string;
  /** Its name inside a sentence ("sent by email", "sent on IRC"). */
  readonly inSentence: string;
  /** The secrets the window can save for it, as the secret store names them (`<platform>.<secret>`). */
  readonly secrets: readonly string[];
  /**
   * Whether an unknown sender can ask for a pairing code, so the window lists
   * their requests: `default` where pairing is the default for direct messages,
   * `opt-in` where a setting turns it on (the list shows once someone asked).
   */
  readonly pairing: 'default' | 'opt-in' | 'none';
  /** A short glyph for its badge where no chat type is known. */
  readonly glyph: string;
  /** What the card says when the server refuses the login: who refused, and what to do. */
  readonly loginRefused: string;
  /** Its settings form in the window: the fields of its config.json section, with their words and help. */
  readonly form: FormDescription;
}

export const PLATFORM_INFO = [
  {
    name: 'telegram',
    label: 'Telegram',
    inSentence: 'Telegram',
    secrets: ['telegram.token'],
    pairing: 'default',
    glyph: '✈',
    loginRefused: 'Telegram refused the bot token: paste it again (from @BotFather) in Platforms → Telegram.',
    form: TELEGRAM_FORM,
  },
  {
    name: 'matrix',
    label: 'Matrix',
    inSentence: 'Matrix',
    secrets: ['matrix.accessToken', 'matrix.password'],
    pairing: 'default',
    glyph: '[m]',
    loginRefused: 'the homeserver refused the login: store a new access token (or check the password) in Platforms → Matrix.',
    form: MATRIX_FORM,
  },
  {
    name: 'discord',
    label: 'Discord',
    inSentence: 'Discord',
    secrets: ['discord.token'],
    pairing: 'default',
    glyph: 'D',
    loginRefused: 'Discord refused the bot token: paste it again (Developer Portal → your application → Bot → Reset Token) in Platforms → Discord.',
    form: DISCORD_FORM,
  },
  {
    name: 'slack',
    label: 'Slack',
    inSentence: 'Slack',
    secrets: ['slack.appToken', 'slack.botToken'],
    pairing: 'default',
    glyph: '#',
    loginRefused: 'Slack refused a token: paste the app-level token (xapp-…) and the bot token (xoxb-…) again (api.slack.com → your app) in Platforms → Slack.',
    form: SLACK_FORM,
  },
  {
    name: 'signal',
    label: 'Signal',
    inSentence: 'Signal',
    secrets: [],
    pairing: 'default',
    glyph: 'S',
    loginRefused: 'Signal says the account signal-cli uses is not registered: link signal-cli again (signal-cli link -n Homing) and restart its daemon.',
    form: SIGNAL_FORM,
  },
  {
    name: 'xmpp',
    label: 'XMPP',
    inSentence: 'XMPP',
    secrets: ['xmpp.password'],
    pairing: 'default',
    glyph: 'X',
    loginRefused: 'the XMPP server refused the login: check the JID and password in Platforms → XMPP.',
    form: XMPP_FORM,
  },
  {
    name: 'irc',
    label: 'IRC',
    inSentence: 'IRC',
    secrets: ['irc.password'],
    pairing: 'opt-in',
    glyph: 'I',
    loginRefused: 'the server refused the login: check the nick and password in Platforms.',
    form: IRC_FORM,
  },
  {
    name: 'email',
    label: 'Email',
    inSentence: 'email',
    secrets: ['email.password'],
    pairing: 'none',
    glyph: '✉',
    loginRefused: 'the mail server refused the login: check the address, login name and password in Platforms → Email.',
    form: EMAIL_FORM,
  },
] as const satisfies readonly PlatformInfo[];

/** The network platforms' names (the local chat is not one of them: it is always there). */
export type PlatformName = (typeof PLATFORM_INFO)[number]['name'];
export const PLATFORM_NAMES = PLATFORM_INFO.map((info) => info.name) as readonly PlatformName[];

/** The app's own chat in the window: a platform in session keys and the ledger, but not configured. */
export const LOCAL_PLATFORM_NAME = 'local';

/** Every secret the window can save: the agent's API key, then each platform's. */
export const SECRET_NAMES = ['agent.apiKey', ...PLATFORM_INFO.flatMap((info) => info.secrets)] as readonly [
  'agent.apiKey',
  ...(typeof PLATFORM_INFO)[number]['secrets'][number][],
];
export type SecretName = (typeof SECRET_NAMES)[number];

/** What `testConnection` tries: a platform's, the agent's or the speech server's settings (`speech`), before they are saved. */
export const CONNECTION_TARGETS = [...PLATFORM_NAMES, 'agent', 'speech'] as readonly [...PlatformName[], 'agent', 'speech'];
export type ConnectionTarget = PlatformName | 'agent' | 'speech';

export function platformInfo(name: string): PlatformInfo | undefined {
  return PLATFORM_INFO.find((info) => info.name === name);
}

/** A platform's name on a card ("IRC", "Local chat"); an unknown name as it is. */
export function platformTitle(name: string): string {
  if (name === LOCAL_PLATFORM_NAME) return 'Local chat';
  return platformInfo(name)?.label ?? name;
}

/** A platform's name inside a sentence ("the local chat", "email"); an unknown name as it is. */
export function platformInSentence(name: string): string {
  if (name === LOCAL_PLATFORM_NAME) return 'the local chat';
  return platformInfo(name)?.inSentence ?? name;
}
