import { describe, expect, it } from 'vitest';
import type { Agent, AgentResult, AgentTurn } from './agent.js';
import { abortedResult, runTurnWithTimeout, type Timers } from './timeout.js';

/** Test agents with scripted behaviour: the code under test is the timeout wrapper. */
function agentThat(run: (turn: AgentTurn) => Promise<AgentResult>): Agent {
  return { kind: 'builtin', runTurn: run, close: async () => {} };
}

const turn = { sessionId: 's', history: [], message: { role: 'user' as const, text: 'hi' }, onToken: () => {} };

/** An agent that honours its signal, answering only once aborted. */
const patient = agentThat(
  (t) => new Promise((resolve) => t.signal.addEventListener('abort', () => resolve(abortedResult(t.signal)), { once: true })),
);

/** Timers moved by hand: no test waits for real time. */
function manualTimers() {
  let now = 0;
  const pending = new Map<number, { at: number; fn: () => void }>();
  let next = 1;
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      pending.set(next, { at: now + ms, fn });
      return next++;
    },
    clearTimeout: (handle) => pending.delete(handle as number),
  };
  const advance = async (ms: number) => {
    now += ms;
    for (const [id, timer] of [...pending].sort((a, b) => a[1].at - b[1].at)) {
      if (timer.at <= now && pending.delete(id)) timer.fn();
    }
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { timers, advance, pending };
}

describe('runTurnWithTimeout', () => {
  it('passes a reply through and clears its timer', async () => {
    const { timers, pending } = manualTimers();
    const result = await runTurnWithTimeout(agentThat(async () => ({ ok: true, text: 'yes' })), turn, { timeoutMs: 1_000, timers });
    expect(result).toEqual({ ok: true, text: 'yes' });
    expect(pending.size).toBe(0);
  });

  it('aborts the agent at the deadline and reports timeout', async () => {
    const { timers, advance } = manualTimers();
    let settled = false;
    const running = runTurnWithTimeout(patient, turn, { timeoutMs: 60_000, timers }).finally(() => (settled = true));
    await advance(59_999);
    expect(settled).toBe(false);
    await advance(1);
    expect(await running).toEqual({ ok: false, kind: 'timeout', error: 'the agent did not answer within 60 s' });
  });

  it('answers timeout even when a hung agent ignores its signal, after the settle grace', async () => {
    const { timers, advance } = manualTimers();
    const hung = agentThat(() => new Promise(() => {}));
    let settled = false;
    const running = runTurnWithTimeout(hung, turn, { timeoutMs: 1_000, settleMs: 500, timers }).finally(() => (settled = true));
    await advance(1_000);
    expect(settled).toBe(false);
    await advance(500);
    expect(await running).toMatchObject({ ok: false, kind: 'timeout' });
  });

  it('reports cancelled when the caller aborts, even if the agent reports the abort as another error', async () => {
    const controller = new AbortController();
    const agent = agentThat(
      (t) => new Promise((resolve) => t.signal.addEventListener('abort', () => resolve({ ok: false, kind: 'failed', error: 'EPIPE' }), { once: true })),
    );
    const running = runTurnWithTimeout(agent, turn, { timeoutMs: 60_000, signal: controller.signal });
    controller.abort();
    expect(await running).toEqual({ ok: false, kind: 'cancelled', error: 'the turn was cancelled' });
  });

  it('reports cancelled at once, without starting the agent, for a caller signal that is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    let started = false;
    const agent = agentThat(async () => {
      started = true;
      return { ok: true, text: 'should not run' };
    });
    const { timers, pending } = manualTimers();
    expect(await runTurnWithTimeout(agent, turn, { timeoutMs: 60_000, signal: controller.signal, timers })).toMatchObject({ kind: 'cancelled' });
    expect(started).toBe(false);
    expect(pending.size).toBe(0);
  });

  it('turns an agent that throws (a bug) into a failed result', async () => {
    const broken = agentThat(async () => {
      throw new Error('boom');
    });
    expect(await runTurnWithTimeout(broken, turn, { timeoutMs: 1_000 })).toEqual({ ok: false, kind: 'failed', error: 'the agent crashed: Error: boom' });
  });
});
