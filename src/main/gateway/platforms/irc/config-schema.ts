import { z } from 'zod';

/**
 * The `irc` section of config.json. Nicks and channels are checked here, at the edge,
 * so a typo is a clear config error instead of a server refusing us at every reconnect.
 */

/** RFC 2812 nick characters; length is left to the server (NICKLEN varies). */
const NICK = /^[A-Za-z[\]\\`_^{|}][A-Za-z0-9[\]\\`_^{|}-]*$/;
/** A channel: a type prefix, then no space, comma or BEL (RFC 2812). */
// eslint-disable-next-line no-control-regex -- BEL is exactly what RFC 2812 forbids here
const CHANNEL = /^[#&+!][^\s,\x07]+$/;

export const ircNickSchema = z.string().min(1).max(30).regex(NICK, 'must be an IRC nick (letters, digits, and []\\`_^{|}-)');

export const ircConfigSchema = z.object({
  host: z.string().min(1, 'must name the IRC server'),
  port: z.number().int().min(1).max(65535).default(6697),
  tls: z.boolean().default(true),
  nick: ircNickSchema,
  username: z.string().min(1).max(10).regex(/^[^\s@!:]+$/, 'must be one word without @, ! or :').optional(),
  realname: z.string().min(1).max(100).optional(),
  /** The server password (`PASS`), not a NickServ password. */
  password: z.string().min(1).optional(),
  channels: z.array(z.string().max(50).regex(CHANNEL, 'must be a channel name such as #homing')).default([]),
  /** Nicks allowed to talk to the agent. Empty means nobody: a personal gateway answers its owner. */
  allow: z.array(ircNickSchema).default([]),
});

export type IrcConfig = z.output<typeof ircConfigSchema>;
/** What a config file may contain (defaults not applied yet). */
export type IrcConfigInput = z.input<typeof ircConfigSchema>;
