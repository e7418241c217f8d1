import { z } from 'zod';
import { secretEnvName } from '../../config/secret-env';
import { DM_POLICIES } from '../telegram/config-schema';

/**
 * The `xmpp` section of config.json (the password is not here: it lives in
 * the secret store as `xmpp.password`, or in the variable `passwordEnv` names).
 * JIDs are compared as bare JIDs in lower case.
 */

const CONTROL = /\p{Cc}/u;
/** A bare JID `local@domain`: what an account or a room is called. Resource parts are not allowed here. */
export const bareJidSchema = z
  .string()
  .trim()
  .max(1023)
  .refine((value) => !CONTROL.test(value), 'must not contain control characters')
  .refine((value) => /^[^@/\s"&'<>:]+@[^@/\s"&'<>]+$/u.test(value), 'must be a bare JID like alice@example.org (no /resource)')
  .transform((value) => value.toLowerCase());

/** A room nick: what people write to address the agent in a room. */
export const roomNickSchema = z
  .string()
  .min(1)
  .max(64)
  .refine((value) => !CONTROL.test(value) && !/^\s|\s$/u.test(value), 'must be a nick without control characters or surrounding spaces');

export const XMPP_SECURITY = ['starttls', 'direct-tls', 'none'] as const;
export type XmppSecurity = (typeof XMPP_SECURITY)[number];

/** The most a chunk's body may weigh: even escaped five times over (`&amp;`) it stays within prosody's default 256 KiB stanza limit. */
export const MAX_MESSAGE_BYTES = 48_000;

export const xmppRoomSchema = z.strictObject({
  /** The agent's nick in this room (default: the top-level `nick`). */
  nick: roomNickSchema.optional(),
  /** Answer only messages that start with the agent's nick (`homing: …`), the default; false: every message. */
  requireMention: z.boolean().default(true),
});

export const xmppConfigSchema = z.object({
  /** The agent's account. */
  jid: bareJidSchema,
  /** The server to connect to; default the JID's domain. */
  host: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .regex(/^[^\s/:@]+$|^\[[0-9a-fA-F:]+\]$/, 'must be a host name or address')
    .optional(),
  port: z.number().int().min(1).max(65535).optional(),
  /**
   * `starttls` (the default: the connection must become encrypted, else it is
   * dropped), `direct-tls` (TLS from the first byte, usually port 5223) or
   * `none` (plain text: only for a server on this machine).
   */
  security: z.enum(XMPP_SECURITY).default('starttls'),
  /** The resource this client binds; one fixed name, so a restart replaces the old session. */
  resource: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[^\s/@]+$/, 'must be one word without /, @ or spaces')
    .default('homing'),
  /** The agent's nick in rooms (default: the JID's local part). */
  nick: roomNickSchema.optional(),
  /**
   * Who may talk to the agent one to one: `pairing` (an unknown sender gets a
   * code and waits for your approval), `allowlist` (only `allowFrom`), or
   * `open` (anyone who can reach the account).
   */
  dmPolicy: z.enum(DM_POLICIES).default('pairing'),
  /** Bare JIDs that may always talk to the agent one to one. */
  allowFrom: z.array(bareJidSchema).default([]),
  /** Rooms (MUC, XEP-0045) the agent joins and answers in: room JID → settings. Anyone in a listed room may address the agent. */
  rooms: z.record(z.string(), xmppRoomSchema)
    .superRefine((rooms, context) => {
      for (const room of Object.keys(rooms)) {
        if (!bareJidSchema.safeParse(room).success) context.addIssue({ code: 'custom', path: [room], message: `"${room.slice(0, 60)}" is not a room JID like homing@conference.example.org` });
      }
    })
    .transform((rooms) => Object.fromEntries(Object.entries(rooms).map(([room, settings]) => [room.trim().toLowerCase(), settings])))
    .default({}),
  /**
   * Fetch files people send over plain http:// from any host (default false:
   * https, or http only from this machine), for an upload service without TLS.
   */
  allowHttpFiles: z.boolean().default(false),
  /** The most one message's text may weigh in bytes (UTF-8); a longer reply goes as several messages. */
  maxMessageBytes: z.number().int().min(500).max(MAX_MESSAGE_BYTES).default(10_000),
});

export type XmppConfig = z.output<typeof xmppConfigSchema>;
export type XmppRoomConfig = z.output<typeof xmppRoomSchema>;

/**
 * config.json's `platforms.xmpp` section: the adapter's settings, whether it runs,
 * and where its secrets come from (a variable's name; never the secret itself).
 */
export const xmppPlatformSchema = xmppConfigSchema
  .extend({
    enabled: z.boolean().default(true),
    /** The environment variable holding the account's password; else the secret store's `xmpp.password`. */
    passwordEnv: secretEnvName.optional(),
    password: z
      .never({ error: 'passwords do not belong in config.json: save it in the window, or name an environment variable in "passwordEnv"' })
      .optional(),
  })
  .strict();
export type XmppPlatformSection = z.output<typeof xmppPlatformSchema>;
