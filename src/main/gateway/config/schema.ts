import { z } from 'zod';
import { agentConfigSchema, DEFAULT_AGENT_CONFIG } from '../agents/config-schema';
import { speechConfigSchema } from '../media/transcribe';
import { routingSchema } from '../routing/routing';
import { continuationPolicySchema } from '../session/continuation';
import { DM_SCOPES } from '../session/session-key';

/**
 * config.json, validated in one place. Every section is optional: an empty (or
 * missing) file is the embedded default — the local chat and the built-in agent.
 * Secrets never live here: they are named (`apiKeyEnv`, `passwordEnv`) or kept in
 * the secret store (secrets.json, written through the API).
 */

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

/** Photos, voice notes and files that come with messages (media/): limits and how long their files are kept. */
export const mediaSchema = z
  .strictObject({
    /** Largest file fetched, in MB (10^6 bytes): a larger one reaches the agent as a line saying so. */
    maxFileMB: z.number().min(0.01).max(2000).default(20),
    /** Most MB fetched for one message, all its files together. */
    maxMessageMB: z.number().min(0.01).max(10_000).default(50),
    /** Days a fetched file is kept; then the maintenance sweep removes it and the window says "expired". */
    keepDays: z.number().min(0.01).max(3650).default(30),
    /** Characters of documents' text the agent is shown with one message. */
    documentChars: z.number().int().min(0).max(1_000_000).default(20_000),
  })
  .prefault({});

/**
 * The whole of config.json, given its `platforms` section. The platforms'
 * sections come from their modules (platforms/registry.ts): the config stands
 * below the platforms and names none of them. homing-config.ts puts the two together.
 */
export function configSchemaWith<Platforms extends z.ZodType>(platforms: Platforms) {
  return z.strictObject({
    /** Ignored; lets an editor validate the file. */
    $schema: z.string().optional(),
    agent: agentConfigSchema.default(DEFAULT_AGENT_CONFIG),
    /** One optional section per platform, by its name (`irc`, `telegram`, …). */
    platforms,
    sessions: sessionsSchema,
    delivery: deliverySchema,
    /** Per-chat agent settings: `[{ "match": { "platform", "chat"?, "sender"? }, "agent": { "model"?, "systemPrompt"? } }]`, first match wins. */
    routing: routingSchema,
    media: mediaSchema,
    /** How voice notes and audio are transcribed (a local speech server or program); absent: they are not. */
    speech: speechConfigSchema.optional(),
    /** Conversations answered at the same time (one conversation is always answered in order). */
    maxConcurrentTurns: z.number().int().min(1).max(64).default(4),
    /**
     * Whether Homing looks for a new release: the tray app downloads it and
     * installs it at the next restart, the headless gateway only says so (a log
     * line and a banner in the window). `false`: it never asks.
     */
    autoUpdate: z.boolean().default(true),
  });
}
