import { z } from 'zod';
import { DM_POLICIES } from '../telegram/config-schema';
import { parseDaemonAddress } from './daemon-address';

/**
 * The `signal` section of config.json. Signal has no secret here: the account's
 * keys live in signal-cli's own data directory, and Homing only talks to the
 * signal-cli daemon the user started (`signal-cli -a +NUMBER daemon --tcp
 * --receive-mode manual`). People are named by phone number (E.164, `+4915…`)
 * or by their Signal UUID (the ACI, which stays when a number changes);
 * groups by signal-cli's base64 group id (`listGroups`).
 */

const E164 = /^\+[1-9]\d{6,14}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A group v2 id is 32 bytes, 44 characters of base64 (signal-cli's GroupIdV2.toBase64). */
const GROUP_ID = /^[A-Za-z0-9+/]{43}=$/;

export const signalPersonSchema = z
  .string()
  .trim()
  .refine((value) => E164.test(value) || UUID.test(value), 'must be a phone number with its country code (like +4915112345678) or a Signal UUID')
  .transform((value) => (UUID.test(value) ? value.toLowerCase() : value));

/** Who may address the agent in a group, and whether it must be mentioned. */
export const signalGroupSchema = z.strictObject({
  /** Who here may address the agent: numbers or UUIDs, or `"*"` for everyone. Empty (default): the people allowed in direct messages. */
  allowFrom: z.array(z.union([z.literal('*'), signalPersonSchema])).default([]),
  /** Answer only when mentioned or replied to (default); false: answer every message in the group. */
  requireMention: z.boolean().default(true),
});

export const signalConfigSchema = z.object({
  /**
   * Where the signal-cli daemon listens: `tcp://HOST:PORT` (or just `HOST:PORT`;
   * signal-cli's `--tcp` default is localhost:7583) or `unix:/path/to/socket`
   * (or just the absolute path; `--socket`'s default is $XDG_RUNTIME_DIR/signal-cli/socket).
   */
  daemon: z
    .string()
    .trim()
    .superRefine((value, context) => {
      const parsed = parseDaemonAddress(value);
      if (!parsed.ok) context.addIssue({ code: 'custom', message: parsed.error });
    })
    .default('tcp://127.0.0.1:7583'),
  /** The Signal account signal-cli is linked to (its phone number): the one `-a` names. */
  account: z.string().trim().regex(E164, 'must be the phone number signal-cli is linked to, with its country code (like +4915112345678)'),
  /** Who may talk to the agent in direct messages: `pairing`, `allowlist` (only `allowFrom`) or `open`. */
  dmPolicy: z.enum(DM_POLICIES).default('pairing'),
  /** Numbers or UUIDs that may always talk to the agent, without pairing. */
  allowFrom: z.array(signalPersonSchema).default([]),
  /** Groups the agent answers in (group id → settings). */
  groups: z
    .record(z.string(), signalGroupSchema)
    .superRefine((groups, context) => {
      for (const id of Object.keys(groups)) {
        if (!GROUP_ID.test(id)) context.addIssue({ code: 'custom', path: [id], message: `"${id.slice(0, 60)}" is not a Signal group id: copy it from \`signal-cli listGroups\` (44 characters ending in =)` });
      }
    })
    .default({}),
});

export const signalPlatformSchema = signalConfigSchema.extend({ enabled: z.boolean().default(true) });

export type SignalConfig = z.output<typeof signalConfigSchema>;
export type SignalPlatformSection = z.output<typeof signalPlatformSchema>;
export type SignalGroup = z.output<typeof signalGroupSchema>;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

export function isPhoneNumber(value: string): boolean {
  return E164.test(value);
}
