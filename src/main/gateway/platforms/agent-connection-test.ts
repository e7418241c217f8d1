import type { ConnectionTestResult } from '../../../shared/api';
import { agentConfigSchema, type AgentConfig } from '../agents/config-schema';
import { createAgent } from '../agents/create-agent';
import type { SecretStore } from '../secrets/secret-store';

export interface AgentTestDeps {
  readonly secrets: SecretStore;
  readonly env: NodeJS.ProcessEnv;
  /** The agent section in force (config.json): the server the saved API key was saved for. */
  readonly savedAgent?: AgentConfig;
  readonly timeoutMs: number;
  readonly fetch?: typeof fetch;
  /** Also run one test message and return the answer (a program agent always does). */
  readonly turn?: boolean;
}

/**
 * "Test connection" for the agent's unsaved form. The form comes from the
 * window and may name any server, so a saved secret goes only where it was
 * saved for: the key from the secret store, or the environment variable the
 * saved config names, is sent only when the form's server has the same origin
 * (scheme, host and port — so never over plain http when it was saved for
 * https) as the saved config's. Anything else is tested without a key, and the
 * answer says why.
 */
export async function testAgentConnection(input: unknown, deps: AgentTestDeps): Promise<ConnectionTestResult> {
  const parsed = agentConfigSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `agent.${issue.path.map(String).join('.')}` : 'agent';
    return { ok: false, message: `${where}: ${issue?.message ?? 'invalid'}` };
  }
  const config = parsed.data;
  if (config.type === 'builtin') {
    if (!deps.turn) return { ok: true, message: 'the built-in agent needs nothing: it is ready' };
    return testTurn(config, {}, 'the built-in agent', deps);
  }
  if (config.type !== 'openai') return testProgramAgent(config, deps);
  if (config.apiKeyEnv !== undefined && deps.secrets.get('agent.apiKey') === undefined && !deps.env[config.apiKeyEnv]) {
    return { ok: false, message: `agent.apiKeyEnv names ${config.apiKeyEnv}, but that environment variable is not set` };
  }
  const key = savedKeyFor(config, deps);
  const probed = await probeOpenAi(config.baseUrl, config.model, key.apiKey, deps);
  const result = probed.ok && deps.turn ? await testTurn(config, key.apiKey === undefined ? {} : { apiKey: key.apiKey }, `${config.model} at ${config.baseUrl}`, deps) : probed;
  return key.withheld ? { ...result, message: `${result.message} (${key.withheld})` } : result;
}

/** How a test message went: the answer, or why there is none. */
type TurnOutcome =
  | { readonly ok: true; readonly answer: string }
  /** `unbuilt`: the settings could not make an agent at all (the error says why, in full). */
  | { readonly ok: false; readonly unbuilt?: true; readonly timedOut: boolean; readonly error: string };

/** One real turn with the test message through a fresh agent for `config`, closed after it. */
async function runTestTurn(config: AgentConfig, key: { readonly apiKey?: string }, deps: AgentTestDeps): Promise<TurnOutcome> {
  const built = createAgent(config, { env: deps.env, ...key });
  if (!built.ok) return { ok: false, unbuilt: true, timedOut: false, error: built.error };
  try {
    const result = await built.agent.runTurn({
      sessionId: 'homing-connection-test',
      history: [],
      message: { role: 'user', text: TEST_TURN_TEXT },
      signal: AbortSignal.timeout(deps.timeoutMs),
      onToken: () => {},
    });
    if (result.ok) return { ok: true, answer: result.text.trim() };
    return { ok: false, timedOut: result.kind === 'timeout' || result.kind === 'cancelled', error: result.error };
  } finally {
    await built.agent.close().catch(() => undefined);
  }
}

/**
 * The setup flow's "Try it": what the user sees is the agent answering, not just
 * a server that lists models. The key is the one savedKeyFor allowed (or none).
 */
async function testTurn(config: AgentConfig, key: { readonly apiKey?: string }, what: string, deps: AgentTestDeps): Promise<ConnectionTestResult> {
  const outcome = await runTestTurn(config, key, deps);
  if (!outcome.ok) {
    if (outcome.unbuilt) return { ok: false, message: outcome.error };
    if (outcome.timedOut) {
      return { ok: false, message: `${what} did not answer a test message within ${Math.round(deps.timeoutMs / 1000)} s (a model loading for the first time can take longer: try again)` };
    }
    return { ok: false, message: `${what} did not answer a test message: ${outcome.error}` };
  }
  return { ok: true, message: `${what} answered a test message${outcome.answer ? '' : ' (with an empty reply)'}`, answer: outcome.answer.slice(0, 2_000) };
}

type OpenAiConfig = Extract<AgentConfig, { type: 'openai' }>;
type ProgramConfig = Extract<AgentConfig, { type: 'command' | 'acp' }>;

/** What the test turn asks: short, so a real agent answers quickly. */
export const TEST_TURN_TEXT = 'This is a connection test from Homing. Please answer with one short sentence.';

/**
 * Starts the program and runs one real turn (for ACP: the handshake, a session
 * and a prompt) with a short timeout, then stops it: valid settings that name a
 * program which does not exist, crashes or never answers fail here, not on the
 * first message from a chat.
 */
async function testProgramAgent(config: ProgramConfig, deps: AgentTestDeps): Promise<ConnectionTestResult> {
  const what = config.type === 'acp' ? `the ACP agent ${config.command}` : config.command;
  const outcome = await runTestTurn(config, {}, deps);
  if (!outcome.ok) {
    if (outcome.timedOut) return { ok: false, message: `started ${what}, but it did not answer a test message within ${Math.round(deps.timeoutMs / 1000)} s` };
    return { ok: false, message: outcome.unbuilt ? outcome.error : `${what} did not work: ${outcome.error}` };
  }
  const reply = outcome.answer.replace(/\s+/g, ' ');
  const shown = reply.length > 80 ? `${reply.slice(0, 79)}…` : reply;
  const message = `started ${what} and it answered a test message${shown ? `: “${shown}”` : ' (with an empty reply)'}`;
  return deps.turn ? { ok: true, message, answer: outcome.answer.slice(0, 2_000) } : { ok: true, message };
}

/** The key the running agent would send to this server, or why none is sent. */
function savedKeyFor(form: OpenAiConfig, deps: AgentTestDeps): { apiKey?: string; withheld?: string } {
  const saved = deps.savedAgent?.type === 'openai' ? deps.savedAgent : undefined;
  const stored = deps.secrets.get('agent.apiKey');
  const fromEnv = form.apiKeyEnv !== undefined ? deps.env[form.apiKeyEnv] : undefined;
  if (stored === undefined && fromEnv === undefined) return {};
  const savedOrigin = saved ? originOf(saved.baseUrl) : undefined;
  if (savedOrigin === undefined || savedOrigin !== originOf(form.baseUrl)) {
    return {
      withheld: `no API key was sent: the saved one is for ${savedOrigin ?? 'no OpenAI-compatible server yet'}; save these settings to test with it`,
    };
  }
  if (stored !== undefined) return { apiKey: stored };
  // The environment variable only as the saved config names it: the form alone cannot choose what is read and sent.
  if (saved?.apiKeyEnv !== form.apiKeyEnv) return { withheld: `no API key was sent: save the settings to test with ${form.apiKeyEnv}` };
  return fromEnv ? { apiKey: fromEnv } : {};
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

async function probeOpenAi(baseUrl: string, model: string, apiKey: string | undefined, deps: AgentTestDeps): Promise<ConnectionTestResult> {
  const url = `${baseUrl.replace(/\/+$/, '')}/models`;
  try {
    const response = await (deps.fetch ?? fetch)(url, {
      signal: AbortSignal.timeout(deps.timeoutMs),
      // A redirect would carry the key to wherever it points: follow none.
      redirect: 'manual',
      ...(apiKey ? { headers: { authorization: `Bearer ${apiKey}` } } : {}),
    });
    if (response.status === 401 || response.status === 403) return { ok: false, message: `${baseUrl} refused the API key (${response.status})` };
    if (!response.ok) return { ok: false, message: `${url} answered ${response.status}` };
    const body = (await response.json().catch(() => ({}))) as { data?: { id?: unknown }[] };
    const models = Array.isArray(body.data) ? body.data.map((entry) => entry.id).filter((id) => typeof id === 'string') : [];
    if (models.length > 0 && !models.includes(model)) {
      return { ok: false, message: `${baseUrl} answers, but has no model ${model} (it has ${models.slice(0, 5).join(', ')})` };
    }
    return { ok: true, message: `${baseUrl} answers${models.length > 0 ? ` and has ${model}` : ''}` };
  } catch (error) {
    return { ok: false, message: `nothing answers at ${baseUrl}: ${error instanceof Error ? error.message : String(error)}` };
  }
}
