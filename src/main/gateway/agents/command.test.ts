import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { AgentResult } from './agent.js';
import { createCommandAgent, type CommandAgentOptions } from './command.js';
import { runTurnWithTimeout } from './timeout.js';
import { isAlive } from '../../../../test/support/processes';

const fixture = fileURLToPath(new URL('./fixtures/command-agent.mjs', import.meta.url));

function agentFor(mode: string, extra: Partial<CommandAgentOptions> = {}) {
  return createCommandAgent({ command: process.execPath, args: [fixture, mode], killGraceMs: 300, ...extra });
}

async function run(mode: string, options: { timeoutMs?: number; signal?: AbortSignal; extra?: Partial<CommandAgentOptions>; onToken?: (t: string) => void } = {}) {
  const tokens: string[] = [];
  const result: AgentResult = await runTurnWithTimeout(
    agentFor(mode, options.extra),
    {
      sessionId: 's_abc',
      history: [
        { role: 'user', text: 'hi' },
        { role: 'assistant', text: 'hello' },
      ],
      message: { role: 'user', text: 'how are you?', sender: { pseudonym: 'p1', displayName: 'Ada' } },
      onToken: (t) => {
        tokens.push(t);
        options.onToken?.(t);
      },
    },
    { timeoutMs: options.timeoutMs ?? 10_000, signal: options.signal, settleMs: 3_000 },
  );
  return { result, tokens };
}

/** A zombie (exited, not yet reaped by a PID 1 that does not reap) counts as gone. */

/**
 * A grandchild is not ours to wait() for: after the group SIGKILL the kernel
 * needs a moment to tear it down, so poll briefly instead of asserting at once.
 */
async function goneSoon(pid: number, withinMs = 2_000): Promise<boolean> {
  for (const started = Date.now(); Date.now() - started < withinMs; ) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return !isAlive(pid);
}

function pidsFrom(tokens: string[]): number[] {
  const match = /pids (\d+) (\d+)/.exec(tokens.join(''));
  if (!match) throw new Error(`no pids in ${JSON.stringify(tokens)}`);
  return [Number(match[1]), Number(match[2])];
}

describe('command agent', () => {
  it('writes the turn as JSON on stdin and streams stdout back as the reply', async () => {
    const { result, tokens } = await run('echo');
    const expected = 'session s_abc; history [user:hi | assistant:hello]; message how are you?; version 1';
    expect(result).toEqual({ ok: true, text: expected });
    expect(tokens.length).toBeGreaterThan(1);
    expect(tokens.join('')).toBe(expected + '\n');
  });

  // The timeout must leave room for the program to start and print its pids:
  // Node alone takes over 500 ms to start on a loaded 2-core machine.
  it('kills a slow program and its grandchild on timeout', async () => {
    const { result, tokens } = await run('slow', { timeoutMs: 2_000 });
    expect(result).toMatchObject({ ok: false, kind: 'timeout' });
    const [pid, grandchild] = pidsFrom(tokens);
    expect(isAlive(pid!)).toBe(false);
    expect(await goneSoon(grandchild!)).toBe(true);
  });

  it('escalates to SIGKILL for a program group that ignores SIGTERM', async () => {
    const started = Date.now();
    const { result, tokens } = await run('stubborn', { timeoutMs: 2_000 });
    expect(result).toMatchObject({ ok: false, kind: 'timeout' });
    const [pid, grandchild] = pidsFrom(tokens);
    expect(isAlive(pid!)).toBe(false);
    expect(await goneSoon(grandchild!)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500 + 300);
  });

  it('is cancelled by the caller, and the program is gone afterwards', async () => {
    const controller = new AbortController();
    const { result, tokens } = await run('slow', { signal: controller.signal, onToken: () => controller.abort() });
    expect(result).toMatchObject({ ok: false, kind: 'cancelled' });
    const [pid, grandchild] = pidsFrom(tokens);
    expect(isAlive(pid!)).toBe(false);
    expect(await goneSoon(grandchild!)).toBe(true);
  });

  it('quotes stderr once in the error (spawnAgentProgram already keeps it)', async () => {
    const agent = createCommandAgent({ command: process.execPath, args: ['-e', 'process.stderr.write("said once\\n"); process.exit(4)'] });
    const result = await agent.runTurn({ sessionId: 's_abc', history: [], message: { role: 'user', text: 'hi' }, onToken: () => {}, signal: new AbortController().signal });
    expect(result).toEqual({ ok: false, kind: 'failed', error: `the command "${process.execPath}" exited with code 4: said once` });
  });

  it('reports a non-zero exit with the tail of stderr', async () => {
    const { result } = await run('fail');
    expect(result).toMatchObject({ ok: false, kind: 'failed' });
    if (result.ok) return;
    expect(result.error).toMatch(/^the command ".*" exited with code 2: /);
    expect(result.error).toMatch(/fatal: the model file is missing$/);
    expect(result.error).not.toContain('noise line 0\n');
    expect(result.error.length).toBeLessThan(2_300);
  });

  it('gives bad-response for binary output', async () => {
    const { result, tokens } = await run('binary');
    expect(result).toMatchObject({ ok: false, kind: 'bad-response', error: expect.stringContaining('binary data') });
    expect(tokens.join('')).not.toContain('\0');
  });

  it('gives bad-response for empty output', async () => {
    const { result } = await run('empty');
    expect(result).toMatchObject({ ok: false, kind: 'bad-response', error: expect.stringContaining('printed nothing') });
  });

  it('caps huge output and says the reply was cut', async () => {
    const { result } = await run('huge', { extra: { maxOutputBytes: 64 * 1024 } });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.text.startsWith('x'.repeat(64 * 1024))).toBe(true);
    expect(result.text).not.toContain('x'.repeat(64 * 1024 + 1));
    expect(result.text).toMatch(/\[reply cut: the command printed more than 64 KiB\]$/);
  });

  it('decodes a UTF-8 character split across two writes', async () => {
    const { result } = await run('partial-utf8');
    expect(result).toEqual({ ok: true, text: 'café' });
  });

  it('reports a program that does not exist as unreachable', async () => {
    const agent = createCommandAgent({ command: '/nonexistent/homing-agent', args: [] });
    const result = await runTurnWithTimeout(agent, { sessionId: 's', history: [], message: { role: 'user', text: 'x' }, onToken: () => {} }, { timeoutMs: 5_000 });
    expect(result).toEqual({ ok: false, kind: 'unreachable', error: 'could not start the command "/nonexistent/homing-agent": not found' });
  });

  it('blames a missing working directory, not the program, when cwd does not exist', async () => {
    const agent = createCommandAgent({ command: process.execPath, args: ['-e', ''], cwd: '/nonexistent/dir' });
    const result = await runTurnWithTimeout(agent, { sessionId: 's', history: [], message: { role: 'user', text: 'x' }, onToken: () => {} }, { timeoutMs: 5_000 });
    expect(result).toEqual({ ok: false, kind: 'unreachable', error: `could not start the command "${process.execPath}": its working directory /nonexistent/dir does not exist` });
  });

  it('never uses a shell: shell syntax in arguments stays literal', async () => {
    const agent = createCommandAgent({ command: process.execPath, args: ['-e', 'process.stdout.write(process.argv[1])', '$(echo pwned); `id`'] });
    const result = await runTurnWithTimeout(agent, { sessionId: 's', history: [], message: { role: 'user', text: 'x' }, onToken: () => {} }, { timeoutMs: 5_000 });
    expect(result).toEqual({ ok: true, text: '$(echo pwned); `id`' });
  });

  it('passes configured environment variables and cwd', async () => {
    const agent = createCommandAgent({
      command: process.execPath,
      args: ['-e', 'process.stdout.write(process.env.HOMING_TEST_VAR + " " + process.cwd())'],
      env: { HOMING_TEST_VAR: 'hello' },
      cwd: '/tmp',
    });
    const result = await runTurnWithTimeout(agent, { sessionId: 's', history: [], message: { role: 'user', text: 'x' }, onToken: () => {} }, { timeoutMs: 5_000 });
    expect(result).toEqual({ ok: true, text: 'hello /tmp' });
  });
});
