import { describe, expect, it } from 'vitest';
import type { AgentResult, TurnMessage } from './agent.js';
import { createBuiltinAgent, splitIntoPieces, type BuiltinAgentOptions } from './builtin.js';

async function ask(text: string, options: BuiltinAgentOptions = {}, signal = new AbortController().signal) {
  const tokens: string[] = [];
  const message: TurnMessage = { role: 'user', text };
  const result: AgentResult = await createBuiltinAgent(options).runTurn({
    sessionId: 's1',
    history: [],
    message,
    signal,
    onToken: (t) => tokens.push(t),
  });
  return { result, tokens };
}

function textOf(result: AgentResult): string {
  if (!result.ok) throw new Error(`expected a reply, got ${result.kind}: ${result.error}`);
  return result.text;
}

describe('builtin agent', () => {
  it('answers a normal message by saying what it is and where in Homing to connect a real agent, naming no local path', async () => {
    const { result, tokens } = await ask('hello there');
    const text = textOf(result);
    expect(text).toContain('built-in agent');
    expect(text).toContain('open Homing’s Platforms view');
    // The reply may go to an IRC channel: nothing about this machine.
    expect(text).not.toMatch(/\/home|\.config|[A-Z]:\\/);
    for (const kind of ['Ollama', 'OpenAI-compatible', '"type": "command"', '"type": "acp"']) expect(text).toContain(kind);
    // Streamed in several pieces that add up to the final text.
    expect(tokens.length).toBeGreaterThan(2);
    expect(tokens.join('')).toBe(text);
  });

  it('lists its commands on /help', async () => {
    const text = textOf((await ask('/help')).result);
    expect(text).toMatch(/\/help/);
    expect(text).toMatch(/\/status/);
    expect(text).toMatch(/\/new/);
    expect(text).not.toContain('built-in agent. I only');
  });

  it('reports version, uptime, platform states and owed replies on /status from the injected provider', async () => {
    const status = () => ({
      version: '0.1.0',
      uptimeMs: (26 * 60 + 5) * 60_000,
      platforms: [
        { name: 'local', state: 'connected' },
        { name: 'irc', state: 'degraded' },
      ],
      owed: 3,
    });
    const { result, tokens } = await ask('  /STATUS  ', { status });
    const text = textOf(result);
    expect(text).toContain('Homing 0.1.0, up 1 d 2 h 5 min.');
    expect(text).toContain('local: connected, irc: degraded');
    expect(text).toContain('Replies still owed: 3.');
    expect(tokens.join('')).toBe(text);
  });

  it('says status is unavailable when no provider is given', async () => {
    expect(textOf((await ask('/status')).result)).toBe('Status is not available here.');
  });

  it('confirms a new conversation on /new (the pipeline does the reset)', async () => {
    const { result, tokens } = await ask('/new');
    expect(textOf(result)).toMatch(/^Started a new conversation\./);
    expect(tokens.length).toBeGreaterThan(1);
  });

  it('returns cancelled when its signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const { result } = await ask('hi', {}, controller.signal);
    expect(result).toEqual({ ok: false, kind: 'cancelled', error: 'the turn was cancelled' });
  });

  it('splits text into pieces that join back to it exactly', () => {
    const text = 'one two three\nfour five six seven';
    const pieces = splitIntoPieces(text, 4);
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    expect(pieces.join('')).toBe(text);
  });
});
