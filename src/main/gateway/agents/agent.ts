/**
 * An agent runs one stateless turn: it is given the conversation so far and the
 * new message, streams tokens while it works, and returns the final reply. Where
 * the context comes from and where the reply goes is the gateway's business.
 */

export type AgentKind = 'builtin' | 'openai' | 'command' | 'acp';

export interface TurnMessage {
  readonly role: 'user' | 'assistant';
  readonly text: string;
  /** Who wrote a user message: a pseudonym and a display name, never a raw platform id. */
  readonly sender?: { readonly pseudonym: string; readonly displayName?: string | undefined } | undefined;
}

export interface AgentTurn {
  /** Homing's session id (file-safe); agents with sessions of their own (ACP) key them on it. */
  readonly sessionId: string;
  /** Earlier turns, oldest first. */
  readonly history: readonly TurnMessage[];
  readonly message: TurnMessage;
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
