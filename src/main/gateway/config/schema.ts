import { z } from 'zod';
import { agentConfigSchema, DEFAULT_AGENT_CONFIG } from '../agents/config-schema';
import { ircConfigSchema } from '../platforms/irc/config-schema';
import { discordConfigSchema } from '../platforms/discord/config-schema';
import { emailConfigSchema } from '../platforms/email/config-schema';
import { matrixConfigSchema } from '../platforms/matrix/config-schema';
import { telegramConfigSchema } from '../platforms/telegram/config-schema';
import { routingSchema } from '../routing/routing';
import { xmppConfigSchema } from '../platforms/xmpp/config-schema';
import { continuationPolicySchema } from '../session/continuation';
import { DM_SCOPES } from '../session/session-key';

/**
 * config.json, validated in one place. Every section is optional: an empty (or
 * missing) file is the embedded default — the local chat and the built-in agent.
 * Secrets never live here: they are named (`apiKeyEnv`, `passwordEnv`) or kept in
 * the secret store (secrets.json, written through the API).
 */

/**
 * The variable a password is read from must be named like one (`…_PASSWORD`,
 * `…_PASS`, `…_TOKEN`, `…_KEY`): a config cannot make Homing send HOME or PATH to
 * a server as its password. The same rule as `apiKeyEnv`'s.
 */
const passwordEnvName = z.string().regex(/^(?:[A-Za-z_][A-Za-z0-9_]*_)?(?:PASSWORD|PASSWD|PASS|TOKEN|KEY|SECRET)$/i, {
  error: 'must name a variable that holds a password: its name ends in _PASSWORD, _PASS, _TOKEN or _KEY, like IRC_PASSWORD',
});

export const ircPlatformSchema = ircConfigSchema
  .omit({ password: true })
  .extend({
    enabled: z.boolean().default(true),
    /** The environment variable holding the server password; else the secret store's `irc.password`. */
    passwordEnv: passwordEnvName.optional(),
    password: z
      .never({ error: 'passwords do not belong in config.json: name an environment variable in "passwordEnv"' })
      .optional(),
  })
  .strict()
  .refine((irc) => !(irc.pairing && irc.requireAccount), {
    path: ['pairing'],
    message: 'pairing approves nicks, so it cannot be combined with requireAccount: list accounts in "allow" instead',
  });

export const telegramPlatformSchema = telegramConfigSchema
  .extend({
    enabled: z.boolean().default(true),
    /** The environment variable holding the bot token; else the secret store's `telegram.token`. */
    tokenEnv: passwordEnvName.optional(),
    token: z.never({ error: 'the bot token does not belong in config.json: save it in the window, or name an environment variable in "tokenEnv"' }).optional(),
  })
  .strict();

export const matrixPlatformSchema = matrixConfigSchema
  .extend({
    enabled: z.boolean().default(true),
    /** The environment variable holding an access token; else the secret store's `matrix.accessToken`. */
    accessTokenEnv: passwordEnvName.optional(),
    /** The environment variable holding the account's password; else the secret store's `matrix.password`. */
    passwordEnv: passwordEnvName.optional(),
    accessToken: z.never({ error: 'the access token does not belong in config.json: save it in the window, or name an environment variable in "accessTokenEnv"' }).optional(),
    password: z.never({ error: 'passwords do not belong in config.json: save it in the window, or name an environment variable in "passwordEnv"' }).optional(),
  })
  .strict();

export const emailPlatformSchema = emailConfigSchema
  .extend({
    enabled: z.boolean().default(true),
    /** The environment variable holding the mailbox password; else the secret store's `email.password`. */
    passwordEnv: passwordEnvName.optional(),
    password: z.never({ error: 'the mailbox password does not belong in config.json: save it in the window, or name an environment variable in "passwordEnv"' }).optional(),
  })
  .strict();

export const discordPlatformSchema = discordConfigSchema
  .extend({
    enabled: z.boolean().default(true),
    /** The environment variable holding the bot token; else the secret store's `discord.token`. */
    tokenEnv: passwordEnvName.optional(),
    token: z.never({ error: 'the bot token does not belong in config.json: save it in the window, or name an environment variable in "tokenEnv"' }).optional(),
  })
  .strict();

export const xmppPlatformSchema = xmppConfigSchema
  .extend({
    enabled: z.boolean().default(true),
    /** The environment variable holding the account's password; else the secret store's `xmpp.password`. */
    passwordEnv: passwordEnvName.optional(),
    password: z
      .never({ error: 'passwords do not belong in config.json: save it in the window, or name an environment variable in "passwordEnv"' })
      .optional(),
  })
  .strict();

export const platformsSchema = z
  .strictObject({
    irc: ircPlatformSchema.optional(),
    telegram: telegramPlatformSchema.optional(),
    matrix: matrixPlatformSchema.optional(),
    email: emailPlatformSchema.optional(),
    discord: discordPlatformSchema.optional(),
    xmpp: xmppPlatformSchema.optional(),
  })
  .default({});

/**
 * `{ "alice": ["irc:alice", "telegram:123"] }`, checked here as completely as the
 * session router checks it (session-key.ts), so a file that passes the schema
 * can never stop the gateway at start or crash a live reload: a name, entries
 * of the shape `<platform>:<sender id>` (platform names are lower-case words),
 * and no entry linked to two people.
 */
export const identityLinksSchema = z
  .record(
    // Names are checked below: zod words an issue with a record's key only as "Invalid key in record".
    z.string(),
    z.array(
      z
        .string()
        .max(1000)
        .regex(/^[a-z][a-z0-9_-]*:\P{Cc}+$/u, { error: 'must look like "<platform>:<sender id>", like "irc:alice"' }),
    ),
  )
  .superRefine((links, context) => {
    const owner = new Map<string, string>();
    for (const [name, entries] of Object.entries(links)) {
      if (name.trim() === '' || name.length > 200 || !/^\P{Cc}+$/u.test(name)) {
        context.addIssue({ code: 'custom', path: [name], message: 'a link name must be visible text (at most 200 characters)' });
      }
      entries.forEach((entry, index) => {
        const other = owner.get(entry);
        if (other !== undefined && other !== name) {
          context.addIssue({ code: 'custom', path: [name, index], message: `"${entry}" is already linked to "${other}": one account belongs to one person` });
        }
        owner.set(entry, name);
      });
    }
  });

export const sessionsSchema = z
  .strictObject({
    dmScope: z.enum(DM_SCOPES).default('per-platform-peer'),
    groupSessionsPerUser: z.boolean().default(false),
    /** `{ "alice": ["irc:alice", "telegram:123"] }`: one person's direct chats on several platforms share a conversation. */
    identityLinks: identityLinksSchema.default({}),
    /** How many earlier turns the agent is shown at most; older ones are condensed into a summary. */
    contextTurns: z.number().int().min(0).max(1000).default(50),
    /** The context budget in estimated tokens: beyond it, older turns are condensed into a summary by the agent. */
    contextTokens: z.number().int().min(500).max(10_000_000).default(8000),
    ...continuationPolicySchema.shape,
  })
  // An absent section is parsed as {}, so the field defaults above are the only ones.
  .prefault({});

export const deliverySchema = z
  .strictObject({
    maxAttempts: z.number().int().min(1).max(100).default(5),
    staleHours: z.number().min(0.1).max(24 * 365).default(24),
    retentionDays: z.number().min(0).max(3650).default(7),
    /**
     * How long a gateway's heartbeat vouches for it. After a crash, what it owed
     * is taken over once this has run out (and its process is provably gone).
     */
    leaseSeconds: z.number().int().min(2).max(3600).default(30),
  })
  .prefault({});

export const homingConfigSchema = z.strictObject({
  /** Ignored; lets an editor validate the file. */
  $schema: z.string().optional(),
  agent: agentConfigSchema.default(DEFAULT_AGENT_CONFIG),
  platforms: platformsSchema,
  sessions: sessionsSchema,
  delivery: deliverySchema,
  /** Per-chat agent settings: `[{ "match": { "platform", "chat"?, "sender"? }, "agent": { "model"?, "systemPrompt"? } }]`, first match wins. */
  routing: routingSchema,
  /** Conversations answered at the same time (one conversation is always answered in order). */
  maxConcurrentTurns: z.number().int().min(1).max(64).default(4),
});

export type HomingConfig = z.output<typeof homingConfigSchema>;
export type HomingConfigInput = z.input<typeof homingConfigSchema>;

export const DEFAULT_CONFIG: HomingConfig = homingConfigSchema.parse({});
