import { z } from 'zod';
import { secretEnvName } from '../../config/secret-env';

/**
 * The `telegram` section of config.json (the token is not here: it lives in
 * the secret store as `telegram.token`, or in the variable `tokenEnv` names).
 * Ids are Telegram's numeric ids, written as strings or numbers.
 */

/** A Telegram user or chat id: an integer, negative for groups (`-1001234567890`). */
export const telegramIdSchema = z
  .union([z.number().int().safe(), z.string().regex(/^-?\d{1,20}$/, 'must be a Telegram numeric id like 123456789 or -1001234567890')])
  .transform((value) => String(value));

export const DM_POLICIES = ['pairing', 'allowlist', 'open'] as const;
export type DmPolicy = (typeof DM_POLICIES)[number];

export const telegramGroupSchema = z.strictObject({
  /**
   * Who in this group may address the agent: user ids, or `"*"` for everyone in
   * it. Empty (the default): the people allowed in direct messages (approved by
   * pairing or in `allowFrom`).
   */
  allowFrom: z.array(z.union([z.literal('*'), telegramIdSchema])).default([]),
  /** Answer only when mentioned, replied to, or addressed by a command (default); false: every message. */
  requireMention: z.boolean().default(true),
});

export const telegramConfigSchema = z.object({
  /** The Bot API's address; the real one unless you run a local Bot API server (or a test fake). */
  apiRoot: z
    .string()
    .url('must be a URL like https://api.telegram.org')
    .regex(/^https?:\/\//i, 'must be an http(s) URL')
    .transform((url) => url.replace(/\/+$/, ''))
    .default('https://api.telegram.org'),
  /**
   * Who may talk to the agent in direct messages: `pairing` (an unknown sender
   * gets a code and waits for your approval), `allowlist` (only `allowFrom`),
   * or `open` (anyone who finds the bot).
   */
  dmPolicy: z.enum(DM_POLICIES).default('pairing'),
  /** User ids that may always talk to the agent, without pairing. */
  allowFrom: z.array(telegramIdSchema).default([]),
  /** Group chats the agent answers in (chat id → settings); any other group is ignored. */
  groups: z
    .record(z.string(), telegramGroupSchema)
    // Checked here: zod words a bad record key only as "Invalid key in record".
    .superRefine((groups, context) => {
      for (const id of Object.keys(groups)) {
        if (!/^-\d{1,20}$/.test(id)) context.addIssue({ code: 'custom', path: [id], message: `"${id.slice(0, 40)}" is not a group id: group ids are negative numbers like -1001234567890` });
      }
    })
    .default({}),
  /** How long one getUpdates call waits for news (long poll), in seconds. */
  pollTimeoutSeconds: z.number().int().min(1).max(50).default(30),
});

export type TelegramConfig = z.output<typeof telegramConfigSchema>;
export type TelegramGroupConfig = z.output<typeof telegramGroupSchema>;

/**
 * config.json's `platforms.telegram` section: the adapter's settings, whether it runs,
 * and where its secrets come from (a variable's name; never the secret itself).
 */
export const telegramPlatformSchema = telegramConfigSchema
  .extend({
    enabled: z.boolean().default(true),
    /** The environment variable holding the bot token; else the secret store's `telegram.token`. */
    tokenEnv: secretEnvName.optional(),
    token: z.never({ error: 'the bot token does not belong in config.json: save it in the window, or name an environment variable in "tokenEnv"' }).optional(),
  })
  .strict();
export type TelegramPlatformSection = z.output<typeof telegramPlatformSchema>;
