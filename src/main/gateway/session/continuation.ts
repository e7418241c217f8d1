import { z } from 'zod';
import { CHAT_TYPES, type ChatType } from './source';

/**
 * When a conversation goes on and when it starts afresh.
 *
 * - Reset policies decide whether the key's current session is still current:
 *   `none` keeps it forever, `daily` ends it at a local hour, `idle` after some
 *   minutes without a message. A stale session is not continued; the next
 *   message starts a new one (the old transcript stays readable).
 * - The freshness window decides what happens to an interrupted turn (a user
 *   message the gateway never answered, e.g. it crashed): inside the window it
 *   is answered automatically, outside it the user is asked instead, since an
 *   answer hours late to a question they may have given up on is worse than none.
 */

export type ResetPolicy =
  | { readonly mode: 'none' }
  | { readonly mode: 'daily'; readonly atHour: number }
  | { readonly mode: 'idle'; readonly idleMinutes: number };

export type ResetReason = 'daily' | 'idle' | 'command';

export interface ContinuationPolicy {
  /** Seconds; ≤ 0 never continues an interrupted turn automatically. */
  readonly freshnessWindowSeconds: number;
  readonly reset: ResetPolicy;
  readonly resetByChatType: Readonly<Partial<Record<ChatType, ResetPolicy>>>;
}

export const DEFAULT_FRESHNESS_WINDOW_SECONDS = 3600;

export const defaultContinuationPolicy: ContinuationPolicy = {
  freshnessWindowSeconds: DEFAULT_FRESHNESS_WINDOW_SECONDS,
  reset: { mode: 'none' },
  resetByChatType: {},
};

const resetPolicySchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('none') }),
  z.object({ mode: z.literal('daily'), atHour: z.number().int().min(0).max(23) }),
  z.object({ mode: z.literal('idle'), idleMinutes: z.number().int().min(1).max(525_600) }),
]);

/** For the config edge: every field optional, defaults filled in. */
export const continuationPolicySchema = z.object({
  freshnessWindowSeconds: z.number().int().default(DEFAULT_FRESHNESS_WINDOW_SECONDS),
  reset: resetPolicySchema.default({ mode: 'none' }),
  resetByChatType: z.partialRecord(z.enum(CHAT_TYPES), resetPolicySchema).default({}),
});

export function resetPolicyFor(policy: ContinuationPolicy, chatType: ChatType): ResetPolicy {
  return policy.resetByChatType[chatType] ?? policy.reset;
}

/**
 * Why a session whose last message was at `lastActivityAt` is no longer
 * current at `now`, or undefined if it still is. `daily` uses the local time
 * of this machine, which is what "every morning at 4" means to its user.
 */
export function staleReason(lastActivityAt: number, now: number, policy: ResetPolicy): Exclude<ResetReason, 'command'> | undefined {
  switch (policy.mode) {
    case 'none':
      return undefined;
    case 'idle':
      return now - lastActivityAt >= policy.idleMinutes * 60_000 ? 'idle' : undefined;
    case 'daily':
      return lastActivityAt < lastDailyBoundary(now, policy.atHour) ? 'daily' : undefined;
    default:
      return assertNever(policy);
  }
}

/** The latest local `atHour:00` at or before `now`. */
export function lastDailyBoundary(now: number, atHour: number): number {
  const boundary = new Date(now);
  boundary.setHours(atHour, 0, 0, 0);
  if (boundary.getTime() > now) boundary.setDate(boundary.getDate() - 1);
  return boundary.getTime();
}

export type InterruptedDecision = 'auto-continue' | 'ask-user';

export function decideInterrupted(userTurnAt: number, now: number, freshnessWindowSeconds: number): InterruptedDecision {
  if (freshnessWindowSeconds <= 0) return 'ask-user';
  return now - userTurnAt <= freshnessWindowSeconds * 1000 ? 'auto-continue' : 'ask-user';
}

export type SessionCommand = { readonly command: 'new' | 'reset'; readonly rest: string };

/**
 * `/new` and `/reset` (also `/new@SomeBot`, as Telegram sends them in groups),
 * optionally followed by text that becomes the first message of the new session.
 */
export function parseSessionCommand(text: string): SessionCommand | undefined {
  const match = /^\s*\/(new|reset)(?:@[A-Za-z0-9_]+)?(?:\s+([\s\S]*))?$/.exec(text);
  if (!match) return undefined;
  return { command: match[1] as 'new' | 'reset', rest: (match[2] ?? '').trim() };
}

function assertNever(value: never): never {
  throw new Error(`unexpected reset policy ${JSON.stringify(value)}`);
}
