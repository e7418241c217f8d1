import type { Agent, AgentResult, AgentTurn } from './agent.js';
import { abortedResult } from './timeout.js';

/** What `/status` reports; the gateway provides it, so this agent stays stateless. */
export interface GatewayStatus {
  readonly version: string;
  readonly uptimeMs: number;
  readonly platforms: readonly { readonly name: string; readonly state: string }[];
  /** Replies recorded in the ledger and not yet delivered. */
  readonly owed: number;
}

export type StatusProvider = () => GatewayStatus | Promise<GatewayStatus>;

export interface BuiltinAgentOptions {
  readonly status?: StatusProvider | undefined;
}

/**
 * The embedded default: needs nothing installed, so a fresh Homing answers at
 * once. It does not pretend to be clever; it says what it is and how to connect
 * a real agent, and answers the gateway's own commands.
 */
export function createBuiltinAgent(options: BuiltinAgentOptions = {}): Agent {
  return {
    kind: 'builtin',
    async runTurn(turn) {
      try {
        const text = await builtinReply(turn.message.text, options, turn.context?.sender?.displayName);
        return await streamInPieces(text, turn);
      } catch (error) {
        return { ok: false, kind: 'failed', error: `the built-in agent failed: ${String(error)}` };
      }
    },
    async close() {},
  };
}

async function builtinReply(message: string, options: BuiltinAgentOptions, name: string | undefined): Promise<string> {
  const command = /^\/(\w+)/.exec(message.trim())?.[1]?.toLowerCase();
  switch (command) {
    case 'help':
      return helpText();
    case 'status':
      return options.status ? statusText(await options.status()) : 'Status is not available here.';
    case 'new':
      return 'Started a new conversation. What came before is kept in the history, but I will not continue from it.';
    default:
      return introText(name);
  }
}

/**
 * The reply goes to whichever chat asked (an IRC channel too): it names where
 * to look in Homing, never a path, a program or a host of this machine.
 */
function introText(name: string | undefined): string {
  // The name is the sender's display name (already cleaned of controls); on the local chat it is "You".
  const greeting = name && name !== 'You' ? `Hello, ${name}!` : 'Hello!';
  return [
    `${greeting} I am Homing’s built-in agent. I only answer a few commands, so that Homing works before anything else is set up.`,
    '',
    'To talk to a real assistant, open Homing’s Platforms view and choose an agent there (or set "agent" in Homing’s config.json) — one of:',
    '• Ollama: {"type": "openai", "baseUrl": "http://127.0.0.1:11434/v1", "model": "llama3.2"}',
    '• any OpenAI-compatible server (LM Studio, llama.cpp, vLLM, a hosted one): {"type": "openai", "baseUrl": "…/v1", "model": "…", "apiKeyEnv": "OPENAI_API_KEY"}',
    '• a local program: {"type": "command", "command": "/path/to/program", "args": []}',
    '• an Agent Client Protocol agent: {"type": "acp", "command": "…", "args": []}',
    '',
    'Type /help for the commands I know.',
  ].join('\n');
}

function helpText(): string {
  return [
    'Commands:',
    '/help: this list',
    '/status: Homing’s version, uptime, platforms and undelivered replies',
    '/new: start a new conversation',
  ].join('\n');
}

function statusText(status: GatewayStatus): string {
  const platforms = status.platforms.length
    ? status.platforms.map((p) => `${p.name}: ${p.state}`).join(', ')
    : 'none';
  return [
    `Homing ${status.version}, up ${formatUptime(status.uptimeMs)}.`,
    `Platforms: ${platforms}.`,
    status.owed === 0 ? 'Every reply has been delivered.' : `Replies still owed: ${status.owed}.`,
  ].join('\n');
}

export function formatUptime(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  const days = Math.floor(minutes / 1_440);
  const hours = Math.floor((minutes % 1_440) / 60);
  const parts = [days && `${days} d`, hours && `${hours} h`, `${minutes % 60} min`].filter(Boolean);
  return parts.join(' ');
}

/**
 * Streams the reply through `onToken` in a few pieces, yielding to the event
 * loop between them, so the UI's streaming path is exercised even with the
 * built-in agent.
 */
async function streamInPieces(text: string, turn: AgentTurn): Promise<AgentResult> {
  const pieces = splitIntoPieces(text, 4);
  for (const piece of pieces) {
    if (turn.signal.aborted) return abortedResult(turn.signal);
    turn.onToken(piece);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return turn.signal.aborted ? abortedResult(turn.signal) : { ok: true, text };
}

/** Cuts text into about `count` pieces at spaces or line ends; joined, they are the text. */
export function splitIntoPieces(text: string, count: number): string[] {
  const target = Math.max(1, Math.ceil(text.length / count));
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + target);
    while (end < text.length && !/\s/.test(text[end - 1]!)) end++;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}
