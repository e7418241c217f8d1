import { z } from 'zod';
import { secretEnvName } from '../../config/secret-env';
import { DM_POLICIES } from '../telegram/config-schema';

/**
 * The `slack` section of config.json. The two tokens are not here: they live in
 * the secret store as `slack.appToken` (the app-level token, `xapp-…`, that
 * opens Socket Mode connections) and `slack.botToken` (`xoxb-…`, for the Web
 * API), or in the variables `appTokenEnv` / `botTokenEnv` name.
 */

/** A member id (`U…`, `W…` on Enterprise Grid): upper-case letters and digits. */
export const slackUserIdSchema = z.string().regex(/^[UW][A-Z0-9]{2,20}$/, 'must be a Slack member id like "U0123456789" (a profile → ⋮ → Copy member ID)');

const CHANNEL_ID = /^[CGD][A-Z0-9]{2,20}$/;

/** Who may address the agent in a channel, and whether it must be mentioned there. */
export const slackChannelSchema = z.strictObject({
  /** Member ids that may address the agent here, or `"*"` for everyone; empty (the default): the people allowed in DMs. */
  allowFrom: z.array(z.union([z.literal('*'), slackUserIdSchema])).default([]),
  /** Answer only when mentioned (`@app`), the default; false: answer every message here. */
  requireMention: z.boolean().default(true),
});

export const slackConfigSchema = z.object({
  /** The Web API's base; the real one unless testing against a fake (@slack/web-api's `slackApiUrl`). */
  apiUrl: z
    .string()
    .url('must be a URL like https://slack.com/api/')
    .regex(/^https?:\/\//i, 'must be an http(s) URL')
    .transform((url) => (url.endsWith('/') ? url : `${url}/`))
    .default('https://slack.com/api/'),
  /** Who may write to the agent in direct messages: `pairing`, `allowlist` (only `allowFrom`) or `open`. */
  dmPolicy: z.enum(DM_POLICIES).default('pairing'),
  /** Member ids that may always talk to the agent, without pairing. */
  allowFrom: z.array(slackUserIdSchema).default([]),
  /** Channels the agent answers in (channel id → settings); a thread follows its channel. */
  channels: z
    .record(z.string(), slackChannelSchema)
    // Checked here: zod words a bad record key only as "Invalid key in record".
    .superRefine((channels, context) => {
      for (const id of Object.keys(channels)) {
        if (!CHANNEL_ID.test(id)) context.addIssue({ code: 'custom', path: [id], message: `"${id.slice(0, 40)}" is not a Slack channel id (like "C0123456789": the channel's About → Channel ID)` });
      }
    })
    .default({}),
});

export type SlackConfig = z.output<typeof slackConfigSchema>;
export type SlackChannelRules = z.output<typeof slackChannelSchema>;

const notHere = (which: string, env: string) =>
  z.never({ error: `the ${which} does not belong in config.json: save it in the window, or name an environment variable in "${env}"` }).optional();

export const slackPlatformSchema = slackConfigSchema
  .extend({
    enabled: z.boolean().default(true),
    /** The environment variable holding the app-level token (`xapp-…`); else the secret store's `slack.appToken`. */
    appTokenEnv: secretEnvName.optional(),
    /** The environment variable holding the bot token (`xoxb-…`); else the secret store's `slack.botToken`. */
    botTokenEnv: secretEnvName.optional(),
    appToken: notHere('app-level token', 'appTokenEnv'),
    botToken: notHere('bot token', 'botTokenEnv'),
  })
  .strict();
export type SlackPlatformSection = z.output<typeof slackPlatformSchema>;
