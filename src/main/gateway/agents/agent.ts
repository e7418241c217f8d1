/**
 * An agent runs one stateless turn: it is given the conversation so far and the
 * new message, streams tokens while it works, and returns the final reply. Where
 * the context comes from and where the reply goes is the gateway's business.
 */

import type { TurnAttachment } from '../media/media';

export type AgentKind = 'builtin' | 'openai' | 'command' | 'acp';

export interface TurnMessage {
  readonly role: 'user' | 'assistant';
  readonly text: string;
  /** Who wrote a user message: a pseudonym and a display name, never a raw platform id. */
  readonly sender?: { readonly pseudonym: string; readonly displayName?: string | undefined } | undefined;
  /**
   * Files that came with the message (only the message being answered has
   * them): images an agent that takes images is sent as image content, paths a
   * command agent may open. What they say in words (a transcript, a
   * document's text, a file that could not be fetched) is in `text` already.
   */
  readonly attachments?: readonly TurnAttachment[] | undefined;
}

/** How the chat is shaped, in the agent's words: `dm` is a direct chat with one person. */
export type ChatKind = 'dm' | 'group' | 'channel' | 'thread';

/**
 * Where and when a turn happens, for every agent kind. People and chats appear
 * as pseudonyms and display names, never as raw platform ids.
 */
export interface ConversationContext {
  /** The platform's name (`irc`, `telegram`, `local`, …). */
  readonly platform: string;
  readonly chatKind: ChatKind;
  /** The chat's pseudonym (`irc:3f2a…`): stable per chat, never its raw id. */
  readonly chat: string;
  /** The group's, channel's or thread's name when known (absent for a direct chat). */
  readonly chatTitle?: string | undefined;
  /** Who wrote the message being answered. */
  readonly sender?: { readonly pseudonym: string; readonly displayName?: string | undefined } | undefined;
  /** The machine's local time when the turn started, like `2026-12-02 01:13 (Wednesday)`. */
  readonly localTime: string;
  /** Like `Europe/Berlin (UTC+01:00)`. */
  readonly timeZone: string;
  /** Older turns condensed by the agent itself; the history that follows continues from it. */
  readonly summary?: string | undefined;
  /** The owner's instructions file (`instructions.md` in the data directory), when there is one. */
  readonly instructions?: string | undefined;
  /** Settings a `routing` rule gives this chat (`model`, `systemPrompt`, …), and the rule's name. */
  readonly route?: { readonly name: string; readonly model?: string | undefined; readonly systemPrompt?: string | undefined } | undefined;
}

export interface AgentTurn {
  /** Homing's session id (file-safe); agents with sessions of their own (ACP) key them on it. */
  readonly sessionId: string;
  /** Earlier turns, oldest first. */
  readonly history: readonly TurnMessage[];
  readonly message: TurnMessage;
  /** Who and where (absent when a caller has none, like a connection test). */
  readonly context?: ConversationContext | undefined;
  /**
   * `summarise`: not a chat turn — the agent is asked to condense `history`
   * into a summary (the message says so); Homing keeps the answer as a summary turn.
   */
  readonly purpose?: 'reply' | 'summarise' | undefined;
  /** Aborted on cancel or timeout; the agent stops work and returns `cancelled`/`timeout`. */
  readonly signal: AbortSignal;
  /** Streamed text as it is generated (may be called zero times). */
  readonly onToken: (text: string) => void;
}

export type AgentErrorKind = 'timeout' | 'cancelled' | 'unreachable' | 'bad-response' | 'failed';

export type AgentResult =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly kind: AgentErrorKind; readonly error: string };

export interface Agent {
  readonly kind: AgentKind;
  /** Never throws: every failure is a result. */
  runTurn(turn: AgentTurn): Promise<AgentResult>;
  /** Releases processes and connections. */
  close(): Promise<void>;
}
