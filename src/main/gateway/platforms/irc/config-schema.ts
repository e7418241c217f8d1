import { z } from 'zod';
import { secretEnvName } from '../../config/secret-env';

/**
 * The `irc` section of config.json. Nicks and channels are checked here, at the edge,
 * so a typo is a clear config error instead of a server refusing us at every reconnect.
 */

/** RFC 2812 nick characters; length is left to the server (NICKLEN varies). */
const NICK = /^[A-Za-z[\]\\`_^{|}][A-Za-z0-9[\]\\`_^{|}-]*$/;
/** A channel: a type prefix, then no space, comma or BEL (RFC 2812). */
// eslint-disable-next-line no-control-regex -- BEL is exactly what RFC 2812 forbids here
const CHANNEL = /^[#&+!][^\s,\x07]+$/;
/**
 * Control characters (C0, DEL, C1). CR and LF would end the IRC line and start a
 * command of the setting's author's choosing (`realname: "x\r\nPRIVMSG …"`); the
 * others have no business in a setting either.
 */
const CONTROL = /\p{Cc}/u;
const NO_CONTROL = 'must not contain control characters (line breaks, tabs, NUL…)';

/** A string setting that never carries a control character. */
const text = () => z.string().refine((value) => !CONTROL.test(value), NO_CONTROL);

/** Whether a setting would be unsafe on the IRC wire; the connection checks every one again. */
export function hasControlCharacter(value: string): boolean {
  return CONTROL.test(value);
}

export const ircNickSchema = text().pipe(z.string().min(1).max(30).regex(NICK, 'must be an IRC nick (letters, digits, and []\\`_^{|}-)'));

/** A services account name as servers report it (IRCv3 account-tag, extended-join, WHOIS 330): one word. */
export const ircAccountSchema = text().pipe(z.string().min(1).max(64).regex(/^[^\s*]+$/, 'must be an account name (one word, not *)'));

/**
 * Who may talk to the agent: a nick (`"ada"`, whoever holds it), or an object
 * naming an account, a nick or both (`{ "nick": "ada", "account": "ada" }`);
 * every field an entry names must match.
 */
export const ircAllowEntrySchema = z.union([
  ircNickSchema,
  z
    .strictObject({ nick: ircNickSchema.optional(), account: ircAccountSchema.optional() })
    .refine((entry) => entry.nick !== undefined || entry.account !== undefined, 'must name a nick, an account or both'),
]);

export type IrcAllowEntry = z.output<typeof ircAllowEntrySchema>;

export const ircConfigSchema = z.object({
  host: text().pipe(z.string().min(1, 'must name the IRC server').max(255).regex(/^[^\s/]+$/, 'must be a host name or address')),
  port: z.number().int().min(1).max(65535).default(6697),
  tls: z.boolean().default(true),
  nick: ircNickSchema,
  username: text().pipe(z.string().min(1).max(10).regex(/^[^\s@!:]+$/, 'must be one word without @, ! or :')).optional(),
  realname: text().pipe(z.string().min(1).max(100)).optional(),
  /** The server password (`PASS`), not a NickServ password. */
  password: text().pipe(z.string().min(1).max(512)).optional(),
  channels: z.array(text().pipe(z.string().max(50).regex(CHANNEL, 'must be a channel name such as #homing'))).default([]),
  /** Who may talk to the agent. Empty means nobody: a personal gateway answers its owner. */
  allow: z.array(ircAllowEntrySchema).default([]),
  /**
   * When true, nobody is answered unless the server says which account they are
   * logged in to, and a plain nick entry `"ada"` means nick ada logged in to
   * account ada. A nick alone lets in whoever holds it: on a network that does not
   * enforce nick registration, anyone who takes it while its owner is away.
   */
  requireAccount: z.boolean().default(false),
  /**
   * When true, a sender who is not on the allowlist gets a pairing code (by
   * NOTICE) instead of a refusal, and is let in once the owner approves it
   * (`homing pairing approve`, or the window). Approval is by nick, so it has
   * the weakness of a plain nick entry; not offered with requireAccount.
   */
  pairing: z.boolean().default(false),
});

export type IrcConfig = z.output<typeof ircConfigSchema>;
/** What a config file may contain (defaults not applied yet). */
export type IrcConfigInput = z.input<typeof ircConfigSchema>;

/**
 * config.json's `platforms.irc` section: the adapter's settings, whether it runs,
 * and where its secrets come from (a variable's name; never the secret itself).
 */
export const ircPlatformSchema = ircConfigSchema
  .omit({ password: true })
  .extend({
    enabled: z.boolean().default(true),
    /** The environment variable holding the server password; else the secret store's `irc.password`. */
    passwordEnv: secretEnvName.optional(),
    password: z
      .never({ error: 'passwords do not belong in config.json: name an environment variable in "passwordEnv"' })
      .optional(),
  })
  .strict()
  .refine((irc) => !(irc.pairing && irc.requireAccount), {
    path: ['pairing'],
    message: 'pairing approves nicks, so it cannot be combined with requireAccount: list accounts in "allow" instead',
  });
export type IrcPlatformSection = z.output<typeof ircPlatformSchema>;
