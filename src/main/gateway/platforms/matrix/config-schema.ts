import { z } from 'zod';
import { secretEnvName } from '../../config/secret-env';
import { DM_POLICIES } from '../telegram/config-schema';

/**
 * The `matrix` section of config.json. The access token or password is not
 * here: it lives in the secret store (`matrix.accessToken`, `matrix.password`)
 * or in the variable `accessTokenEnv` / `passwordEnv` names.
 */

/** A Matrix user id: `@localpart:server`. */
export const matrixUserIdSchema = z
  .string()
  .max(255)
  .regex(/^@[^\s:]+:[^\s]+$/, 'must be a Matrix user id like @alice:example.org');

/** A room id (`!opaque:server`). */
export const matrixRoomIdSchema = z
  .string()
  .max(255)
  .regex(/^![^\s:]+:[^\s]+$/, 'must be a Matrix room id like !AbCdEf:example.org (Room settings → Advanced)');

export const matrixRoomSchema = z.strictObject({
  /**
   * Who in this room may address the agent: user ids, or `"*"` for everyone in
   * it. Empty (the default): the people allowed in direct messages.
   */
  allowFrom: z.array(z.union([z.literal('*'), matrixUserIdSchema])).default([]),
  /** Answer only when mentioned (or in a thread the agent answered in); false: every message. */
  requireMention: z.boolean().default(true),
});

export const matrixConfigSchema = z.object({
  /** The homeserver's client-server address (`https://matrix.example.org`), not the server name. */
  homeserver: z
    .string()
    .url('must be a URL like https://matrix.example.org')
    .regex(/^https?:\/\//i, 'must be an http(s) URL')
    .transform((url) => url.replace(/\/+$/, '')),
  /** The bot account: `@homing:example.org`, or just its localpart for a password login. */
  user: z.string().min(1).max(255).regex(/^[^\s]+$/, 'must be a user id like @homing:example.org'),
  /** Who may talk to the agent in direct messages (as Telegram's): pairing, allowlist or open. */
  dmPolicy: z.enum(DM_POLICIES).default('pairing'),
  /** User ids that may always talk to the agent (and invite it to rooms), without pairing. */
  allowFrom: z.array(matrixUserIdSchema).default([]),
  /**
   * Rooms with their own settings (room id → settings). Any other room the bot
   * was invited to by an allowed user uses the defaults: allowed senders only,
   * when mentioned.
   */
  rooms: z
    .record(z.string(), matrixRoomSchema)
    .superRefine((rooms, context) => {
      for (const id of Object.keys(rooms)) {
        if (!matrixRoomIdSchema.safeParse(id).success) context.addIssue({ code: 'custom', path: [id], message: `"${id.slice(0, 60)}" is not a room id: room ids look like !AbCdEf:example.org` });
      }
    })
    .default({}),
  /** The device name the bot's session shows in other clients. */
  deviceName: z.string().min(1).max(100).default('Homing'),
  /** How long one /sync waits for news (long poll), in seconds. */
  pollTimeoutSeconds: z.number().int().min(1).max(60).default(30),
});

export type MatrixConfig = z.output<typeof matrixConfigSchema>;
export type MatrixRoomConfig = z.output<typeof matrixRoomSchema>;

/**
 * config.json's `platforms.matrix` section: the adapter's settings, whether it runs,
 * and where its secrets come from (a variable's name; never the secret itself).
 */
export const matrixPlatformSchema = matrixConfigSchema
  .extend({
    enabled: z.boolean().default(true),
    /** The environment variable holding an access token; else the secret store's `matrix.accessToken`. */
    accessTokenEnv: secretEnvName.optional(),
    /** The environment variable holding the account's password; else the secret store's `matrix.password`. */
    passwordEnv: secretEnvName.optional(),
    accessToken: z.never({ error: 'the access token does not belong in config.json: save it in the window, or name an environment variable in "accessTokenEnv"' }).optional(),
    password: z.never({ error: 'passwords do not belong in config.json: save it in the window, or name an environment variable in "passwordEnv"' }).optional(),
  })
  .strict();
export type MatrixPlatformSection = z.output<typeof matrixPlatformSchema>;
