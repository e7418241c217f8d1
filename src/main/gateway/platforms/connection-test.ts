import type { ConnectionTarget, ConnectionTestResult } from '../../../shared/api';
import type { AgentConfig } from '../agents/config-schema';
import type { HomingConfig } from '../homing-config';
import type { SecretStore } from '../secrets/secret-store';
import { probeSpeech, speechConfigSchema } from '../media/transcribe';
import { testAgentConnection } from './agent-connection-test';
import { sectionOf } from './catalog';
import { PLATFORM_MODULES } from './registry';

const DEFAULT_TIMEOUT_MS = 10_000;

export interface ConnectionTestDeps {
  readonly secrets: SecretStore;
  readonly env: NodeJS.ProcessEnv;
  /** How long a test may take before it says "no answer" (default 10 s). */
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
  /**
   * The configuration the saved secrets belong to (the running one). A saved
   * secret is sent only to the server it was saved for; without this, none is.
   */
  readonly savedConfig?: Pick<HomingConfig, 'platforms'>;
  /** The agent section in force: a saved API key is sent only to the server it was saved for. */
  readonly savedAgent?: AgentConfig;
  /** The agent only: also run one test message and return the answer. */
  readonly turn?: boolean;
}

/**
 * "Test connection" in the window: tries settings before they are saved, with
 * the same schema as config.json, and says what happened in plain words. It
 * never touches the running platforms (an IRC test is a second, short-lived
 * connection that quits at once).
 */
export async function testConnection(target: ConnectionTarget, config: unknown, deps: ConnectionTestDeps): Promise<ConnectionTestResult> {
  const timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // Each test keeps its own time; this is the backstop for a library call that does not
  // (a DNS lookup runs to its end whatever aborts it): the user gets an answer in time.
  let timer: NodeJS.Timeout | undefined;
  const backstop = new Promise<ConnectionTestResult>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, message: `no answer within ${Math.round(timeoutMs / 1000)} s` }), timeoutMs + BACKSTOP_GRACE_MS);
  });
  try {
    return await Promise.race([runTest(target, config, deps, timeoutMs), backstop]);
  } finally {
    clearTimeout(timer);
  }
}

/** How long past its own time a test may take before the backstop answers for it. */
const BACKSTOP_GRACE_MS = 2_000;

function runTest(target: ConnectionTarget, config: unknown, deps: ConnectionTestDeps, timeoutMs: number): Promise<ConnectionTestResult> {
  if (target === 'agent') {
    return testAgentConnection(config, {
      secrets: deps.secrets,
      env: deps.env,
      timeoutMs,
      ...(deps.savedAgent ? { savedAgent: deps.savedAgent } : {}),
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
      ...(deps.turn ? { turn: true } : {}),
    });
  }
  if (target === 'speech') return testSpeech(config, deps.env, timeoutMs);
  const module = PLATFORM_MODULES[target];
  return module.testConnection(config, {
    secrets: deps.secrets,
    env: deps.env,
    timeoutMs,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
    savedSection: deps.savedConfig ? sectionOf(deps.savedConfig, module) : undefined,
  } as never);
}

/** A speech server's settings (`speech`): half a second of silence transcribed, as a voice note would be. */
async function testSpeech(config: unknown, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<ConnectionTestResult> {
  const parsed = speechConfigSchema.safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, message: `speech${issue?.path.length ? `.${issue.path.join('.')}` : ''}: ${issue?.message ?? 'not valid'}` };
  }
  const result = await probeSpeech(parsed.data, { signal: AbortSignal.timeout(timeoutMs), env });
  return result.ok ? { ok: true, message: 'the speech server transcribed a test recording' } : { ok: false, message: result.error };
}
