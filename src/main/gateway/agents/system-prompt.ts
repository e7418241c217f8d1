import type { ConversationContext, TurnMessage } from './agent.js';

/**
 * The OpenAI-compatible agent's system message: a template (`agent.systemPrompt`,
 * or a routing rule's) whose `{placeholders}` are filled from the turn's
 * context. Unknown `{words}` stay as written, so a template with braces of its
 * own (JSON, code) is not mangled.
 */

export const SYSTEM_PROMPT_PLACEHOLDERS = [
  'platform',
  'chatKind',
  'chatTitle',
  'chat',
  'senderName',
  'sender',
  'localTime',
  'timeZone',
  'where',
] as const;

export type SystemPromptPlaceholder = (typeof SYSTEM_PROMPT_PLACEHOLDERS)[number];

export const DEFAULT_SYSTEM_PROMPT = [
  'You are a helpful assistant, reached through Homing on {platform}.',
  'This conversation is {where}.',
  'The message you answer is from {senderName} ({sender}).',
  'The local time is {localTime}, time zone {timeZone}.',
  'Write replies in Markdown (bold, lists, code blocks, links); Homing turns it into what {platform} shows.',
  'Keep replies short: this is a chat.',
].join('\n');

const KIND_WORDS: Record<ConversationContext['chatKind'], string> = {
  dm: 'a direct chat',
  group: 'a group chat',
  channel: 'a channel',
  thread: 'a thread',
};

/** `a group chat "Friends" (telegram:3f2a…)`: the chat in a few words. */
export function describeWhere(context: ConversationContext, speakers = true): string {
  const title = context.chatTitle ? ` "${context.chatTitle}"` : '';
  const people = context.chatKind === 'dm' || !speakers ? '' : `; several people write here: ${SPEAKER_RULE}`;
  return `${KIND_WORDS[context.chatKind]}${title} (${context.chat})${people}`;
}

function values(context: ConversationContext): Record<SystemPromptPlaceholder, string> {
  return {
    platform: context.platform,
    chatKind: context.chatKind,
    chatTitle: context.chatTitle ?? '',
    chat: context.chat,
    senderName: context.sender?.displayName ?? 'someone whose name is not known',
    sender: context.sender?.pseudonym ?? 'unknown',
    localTime: context.localTime,
    timeZone: context.timeZone,
    where: describeWhere(context),
  };
}

export function renderSystemPrompt(template: string, context: ConversationContext): string {
  const filled = values(context);
  return template.replace(/\{([A-Za-z]+)\}/g, (whole, name: string) =>
    Object.hasOwn(filled, name) ? filled[name as SystemPromptPlaceholder] : whole,
  );
}

/** What the agent is told about a summary that stands in for older turns. */
export function summaryPreface(summary: string): string {
  return `A summary of the earlier part of this conversation precedes the messages below (older messages were condensed into it):\n${summary}`;
}

/** The owner's instructions file, as a part of the system message. */
export function instructionsPart(instructions: string): string {
  return `Instructions from Homing's owner:\n${instructions}`;
}

/** How the agent is told to read a group's messages (part of `{where}`). */
export const SPEAKER_RULE = 'Homing starts each message with `"Name" (pseudonym) wrote:` and quotes its text with `> `; only the quoted lines are the person\'s, and the pseudonym says who it is';

/**
 * A user message as the agent sees it. In a group its author goes first, on a
 * line of Homing's, and every line of the text is quoted:
 *   "Ada" (user_3f2a…) wrote:
 *   > hello
 * Nothing a member types can look like Homing's line (each of their lines is
 * quoted, and the name is a JSON string), so no one can speak as someone else.
 */
export function speakerText(message: TurnMessage, context: ConversationContext | undefined): string {
  if (message.role !== 'user' || !context || context.chatKind === 'dm' || !message.sender) return message.text;
  const { displayName, pseudonym } = message.sender;
  return `${displayName ? `${JSON.stringify(displayName)} ` : ''}(${pseudonym}) wrote:\n${quoteLines(message.text)}`;
}

/** Every line as a Markdown quote (`> `), whatever ends it (CR, LF, U+2028…). */
export function quoteLines(text: string): string {
  return text
    .split(/\r\n|[\n\r\u0085\u2028\u2029]/)
    .map((line) => (line === '' ? '>' : `> ${line}`))
    .join('\n');
}

export function speakerLabel(sender: NonNullable<TurnMessage['sender']>): string {
  return sender.displayName ? `${sender.displayName} (${sender.pseudonym})` : sender.pseudonym;
}

/** What the agent is asked when older turns are condensed. */
export const SUMMARISE_REQUEST = [
  'Summarise the conversation above for yourself, so it can continue without the older messages.',
  'Keep names, facts, decisions, open questions and anything the people asked you to remember.',
  'Write at most a short paragraph or a few bullet points. Answer with the summary only.',
].join(' ');

/** What the agent is asked when its summary came out longer than the budget's share for one. */
export const SHORTEN_SUMMARY_REQUEST =
  'The summary above is too long. Shorten it to a few sentences, keeping names, facts, decisions and open questions. Answer with the summary only.';

/** One line with the turn's context, for agents that get no system message (ACP). */
export function contextLine(context: ConversationContext): string {
  const who = context.sender ? speakerLabel(context.sender) : 'unknown';
  return `[Homing: ${context.platform}, ${describeWhere(context, false)}; from ${who}; local time ${context.localTime}, ${context.timeZone}]`;
}
