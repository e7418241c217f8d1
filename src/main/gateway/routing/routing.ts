import { z } from 'zod';
import type { ConversationContext } from '../agents/agent';
import type { Pseudonymiser } from '../session/pseudonyms';
import { MAX_ID_LENGTH, PLATFORM_NAME } from '../session/source';

/**
 * Per-chat agent settings (`routing` in config.json): rules matched by
 * platform, chat and sender, in order; the first rule that matches gives the
 * conversation its settings (a model, a system prompt). Chats and senders are
 * written as the platform names them (`#homing`, a Telegram chat id); they are
 * compared as pseudonyms, so a rule matches a turn read back from a transcript
 * (after a crash) just as it matches a message that just arrived.
 */

const rawId = z.string().min(1).max(MAX_ID_LENGTH);

export const routingRuleSchema = z
  .strictObject({
    /** Shown in the window and in `/status`; `rule 1`, `rule 2`, … when absent. */
    name: z.string().min(1).max(100).optional(),
    match: z.strictObject({
      platform: z.string().regex(PLATFORM_NAME, { error: 'must be a platform name, like irc or telegram' }).optional(),
      /** The chat's id on the platform: an IRC channel (`#homing`) or nick, a Telegram chat id. */
      chat: rawId.optional(),
      /** The sender's id on the platform: an IRC nick, a Telegram user id. */
      sender: rawId.optional(),
    }),
    agent: z.strictObject({
      /** The model requests name (OpenAI-compatible agents; command agents get it in `context.route`). */
      model: z.string().min(1).max(200).optional(),
      /** The system message's template for these chats (placeholders as in `agent.systemPrompt`). */
      systemPrompt: z.string().max(100_000).optional(),
    }),
  })
  .refine((rule) => rule.match.platform !== undefined || (rule.match.chat === undefined && rule.match.sender === undefined), {
    path: ['match', 'platform'],
    message: 'a rule that names a chat or a sender must name its platform too',
  });

export const routingSchema = z.array(routingRuleSchema).max(500).default([]);

export type RoutingRule = z.output<typeof routingRuleSchema>;

/** Whom a turn is for: pseudonyms only. */
export interface RouteTarget {
  readonly platform: string;
  readonly chat: string;
  readonly sender: string | undefined;
}

export type Route = NonNullable<ConversationContext['route']>;

/** The first rule that matches, as the agent is told it; undefined when none does. */
export function matchRoute(rules: readonly RoutingRule[], target: RouteTarget, pseudonyms: Pseudonymiser): Route | undefined {
  for (const [index, rule] of rules.entries()) {
    const { platform, chat, sender } = rule.match;
    if (platform !== undefined && platform !== target.platform) continue;
    if (chat !== undefined && pseudonyms.chat(target.platform, chat) !== target.chat) continue;
    if (sender !== undefined && pseudonyms.person(target.platform, sender) !== target.sender) continue;
    return {
      name: rule.name ?? `rule ${index + 1}`,
      ...(rule.agent.model !== undefined ? { model: rule.agent.model } : {}),
      ...(rule.agent.systemPrompt !== undefined ? { systemPrompt: rule.agent.systemPrompt } : {}),
    };
  }
  return undefined;
}
