import { z } from 'zod';
import { secretEnvName } from '../../config/secret-env';
import { DM_POLICIES } from '../telegram/config-schema';

/**
 * The `discord` section of config.json (the bot token is not here: it lives in
 * the secret store as `discord.token`, or in the variable `tokenEnv` names).
 * Ids are Discord's snowflakes (17–20 digits), written as strings; numbers are
 * refused, since JSON numbers lose a snowflake's last digits.
 */

export const discordIdSchema = z.string().regex(/^\d{15,20}$/, 'must be a Discord id (Developer Mode → right-click → Copy ID), written as a string like "123456789012345678"');

/** Who may address the agent in a server or channel, and whether it must be mentioned. */
export const discordPlaceSchema = z.strictObject({
  /**
   * Who here may address the agent: user ids, or `"*"` for everyone. Empty (the
   * default): the people allowed in direct messages (approved by pairing or in `allowFrom`).
   */
  allowFrom: z.array(z.union([z.literal('*'), discordIdSchema])).default([]),
  /** Answer only when mentioned or replied to (default); false: answer every message here. */
  requireMention: z.boolean().default(true),
});

const placesSchema = (what: string) =>
  z
    .record(z.string(), discordPlaceSchema)
    // Checked here: zod words a bad record key only as "Invalid key in record".
    .superRefine((places, context) => {
      for (const id of Object.keys(places)) {
        if (!/^\d{15,20}$/.test(id)) context.addIssue({ code: 'custom', path: [id], message: `"${id.slice(0, 40)}" is not a ${what} id: Discord ids are 17–20 digits` });
      }
    })
    .default({});

export const discordConfigSchema = z.object({
  /** Discord's REST API base (discord.js `rest.api`); the real one unless testing against a fake. */
  apiUrl: z
    .string()
    .url('must be a URL like https://discord.com/api')
    .regex(/^https?:\/\//i, 'must be an http(s) URL')
    .transform((url) => url.replace(/\/+$/, ''))
    .default('https://discord.com/api'),
  /**
   * Who may talk to the agent in direct messages: `pairing` (an unknown sender
   * gets a code and waits for your approval), `allowlist` (only `allowFrom`),
   * or `open` (anyone who can message the bot).
   */
  dmPolicy: z.enum(DM_POLICIES).default('pairing'),
  /** User ids that may always talk to the agent, without pairing. */
  allowFrom: z.array(discordIdSchema).default([]),
  /** Servers the agent answers in (server id → settings), in every channel the bot can see there. */
  guilds: placesSchema('server'),
  /** Channels the agent answers in (channel id → settings); a channel's entry wins over its server's, and a thread follows its channel. */
  channels: placesSchema('channel'),
});

export type DiscordConfig = z.output<typeof discordConfigSchema>;
export type DiscordPlace = z.output<typeof discordPlaceSchema>;

/**
 * config.json's `platforms.discord` section: the adapter's settings, whether it runs,
 * and where its secrets come from (a variable's name; never the secret itself).
 */
export const discordPlatformSchema = discordConfigSchema
  .extend({
    enabled: z.boolean().default(true),
    /** The environment variable holding the bot token; else the secret store's `discord.token`. */
    tokenEnv: secretEnvName.optional(),
    token: z.never({ error: 'the bot token does not belong in config.json: save it in the window, or name an environment variable in "tokenEnv"' }).optional(),
  })
  .strict();
export type DiscordPlatformSection = z.output<typeof discordPlatformSchema>;
