import type { Agent, AgentResult, AgentTurn } from './agent.js';

/**
 * Why a turn's signal was aborted. The reason travels on the signal itself
 * (`AbortSignal.reason`), so every agent can answer `timeout` or `cancelled`
 * without knowing who aborted it.
 */
export class TurnTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the agent did not answer within ${formatDuration(timeoutMs)}`);
    this.name = 'TimeoutError';
  }
}

/** The result an agent returns once its turn's signal has been aborted. */
export function abortedResult(signal: AbortSignal): AgentResult {
  const reason: unknown = signal.reason;
  // `AbortSignal.timeout()` aborts with a DOMException named TimeoutError; ours matches it.
  if (reason instanceof Error && reason.name === 'TimeoutError') {
    return { ok: false, kind: 'timeout', error: reason.message || 'the agent did not answer in time' };
  }
  return { ok: false, kind: 'cancelled', error: 'the turn was cancelled' };
}

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const systemTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface TurnTimeoutOptions {
  readonly timeoutMs: number;
  /** The caller's cancel (e.g. the user pressed stop). */
  readonly signal?: AbortSignal | undefined;
  /**
   * How long to wait, after aborting, for the agent to wind down (kill its child,
   * close its stream) before answering anyway. An agent that ignores its signal
   * must not hold the conversation forever.
   */
  readonly settleMs?: number | undefined;
  readonly timers?: Timers | undefined;
}

export const DEFAULT_SETTLE_MS = 5_000;

/**
 * Runs one turn with a deadline. A hung agent gives `timeout`, a caller cancel
 * gives `cancelled`, whatever the agent itself reports after being aborted.
 */
export async function runTurnWithTimeout(
  agent: Agent,
  turn: Omit<AgentTurn, 'signal'>,
  options: TurnTimeoutOptions,
): Promise<AgentResult> {
  // Cancelled before it began: the agent is not started at all.
  if (options.signal?.aborted) return { ok: false, kind: 'cancelled', error: 'the turn was cancelled' };
  const timers = options.timers ?? systemTimers;
  const controller = new AbortController();
  const handles: unknown[] = [];
  let settle: ((result: AgentResult) => void) | undefined;
  const forced = new Promise<AgentResult>((resolve) => (settle = resolve));

  const abort = (reason: unknown): void => {
    if (controller.signal.aborted) return;
    controller.abort(reason);
    const result = abortedResult(controller.signal);
    handles.push(timers.setTimeout(() => settle?.(result), options.settleMs ?? DEFAULT_SETTLE_MS));
  };
  const onCallerAbort = (): void => abort(options.signal?.reason ?? new Error('cancelled'));

  options.signal?.addEventListener('abort', onCallerAbort, { once: true });
  handles.push(timers.setTimeout(() => abort(new TurnTimeoutError(options.timeoutMs)), options.timeoutMs));

  try {
    const ran = agent.runTurn({ ...turn, signal: controller.signal }).catch(
      (error: unknown): AgentResult => ({ ok: false, kind: 'failed', error: `the agent crashed: ${String(error)}` }),
    );
    const result = await Promise.race([ran, forced]);
    // Once aborted, the abort decides the error's kind (an agent may report the
    // abort as a broken pipe or a closed stream); a reply that was complete just
    // as the deadline hit is still a reply.
    return controller.signal.aborted && !result.ok ? abortedResult(controller.signal) : result;
  } finally {
    for (const handle of handles) timers.clearTimeout(handle);
    options.signal?.removeEventListener('abort', onCallerAbort);
  }
}

export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  const seconds = ms / 1_000;
  return Number.isInteger(seconds) ? `${seconds} s` : `${seconds.toFixed(1)} s`;
}
