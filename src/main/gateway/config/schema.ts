import { z } from 'zod';
import { agentConfigSchema, DEFAULT_AGENT_CONFIG } from '../agents/config-schema';
import { ircConfigSchema } from '../platforms/irc/config-schema';
import { continuationPolicySchema } from '../session/continuation';
import { DM_SCOPES } from '../session/session-key';

/**
 * config.json, validated in one place. Every section is optional: an empty (or
 * missing) file is the embedded default — the local chat and the built-in agent.
 * Secrets never live here: they are named (`apiKeyEnv`, `passwordEnv`) or kept in
 * the secret store (secrets.json, written through the API).
 */

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');

export const ircPlatformSchema = ircConfigSchema
  .omit({ password: true })
  .extend({
    enabled: z.boolean().default(true),
    /** The environment variable holding the server password; else the secret store's `irc.password`. */
    passwordEnv: envName.optional(),
    password: z
      .never({ error: 'passwords do not belong in config.json: name an environment variable in "passwordEnv"' })
      .optional(),
  })
  .strict();

export const platformsSchema = z
  .strictObject({
    irc: ircPlatformSchema.optional(),
  })
  .default({});

export const sessionsSchema = z
  .strictObject({
    dmScope: z.enum(DM_SCOPES).default('per-platform-peer'),
    groupSessionsPerUser: z.boolean().default(false),
    /** `{ "alice": ["irc:alice", "telegram:123"] }`: one person's direct chats on several platforms share a conversation. */
    identityLinks: z.record(z.string().min(1), z.array(z.string().min(3))).default({}),
    /** How many earlier turns the agent is shown. */
    contextTurns: z.number().int().min(0).max(1000).default(50),
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
  /** Conversations answered at the same time (one conversation is always answered in order). */
  maxConcurrentTurns: z.number().int().min(1).max(64).default(4),
});

export type HomingConfig = z.output<typeof homingConfigSchema>;
export type HomingConfigInput = z.input<typeof homingConfigSchema>;

export const DEFAULT_CONFIG: HomingConfig = homingConfigSchema.parse({});
