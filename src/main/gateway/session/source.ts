import { z } from 'zod';

export const CHAT_TYPES = ['direct', 'group', 'channel', 'thread'] as const;
export type ChatType = (typeof CHAT_TYPES)[number];

/**
 * Where an inbound message came from, as an adapter reports it. Every id is the
 * platform's raw id (hostile input, possibly personal data): it is used to build
 * the session key and the reply address, and is pseudonymised everywhere else.
 */
export interface SessionSource {
  /** The adapter's name (`telegram`, `matrix`, …); lower case. */
  readonly platform: string;
  readonly chatId: string;
  readonly chatType: ChatType;
  readonly senderId?: string | undefined;
  /** A thread, reply chain or forum topic inside the chat. */
  readonly threadId?: string | undefined;
  readonly chatName?: string | undefined;
  readonly senderName?: string | undefined;
  /** The inbound message's id on the platform. */
  readonly messageId?: string | undefined;
}

/** Platform names are ours, not the platform's: a short lower-case word. */
export const PLATFORM_NAME = /^[a-z][a-z0-9_]{0,31}$/;

/** Long enough for any real id (email Message-IDs are the longest), short enough to bound a key. */
export const MAX_ID_LENGTH = 2048;
export const MAX_DISPLAY_NAME_INPUT = 4096;

const id = z.string().min(1, 'must not be empty').max(MAX_ID_LENGTH);
const displayName = z.string().max(MAX_DISPLAY_NAME_INPUT);

export const sessionSourceSchema = z.object({
  platform: z.string().regex(PLATFORM_NAME, 'must be a lower-case word'),
  chatId: id,
  chatType: z.enum(CHAT_TYPES),
  senderId: id.optional(),
  threadId: id.optional(),
  chatName: displayName.optional(),
  senderName: displayName.optional(),
  messageId: id.optional(),
});

export type SourceResult = { readonly ok: true; readonly source: SessionSource } | { readonly ok: false; readonly error: string };

/** Validates a source at the adapter edge; inside the gateway a SessionSource is trusted. */
export function parseSessionSource(value: unknown): SourceResult {
  const parsed = sessionSourceSchema.safeParse(value);
  if (parsed.success) return { ok: true, source: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return { ok: false, error: `invalid session source: ${where}${issue?.message ?? 'invalid'}` };
}
