import { z } from 'zod';

/**
 * The `agent` section of config.json. Secrets never live here: an API key is
 * named by the environment variable that holds it (`apiKeyEnv`) or kept in the
 * secret store, and resolved by createAgent.
 */

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'must be an environment variable name, like OPENAI_API_KEY' });

/**
 * The variable an API key is read from must be named like one: `…_API_KEY`,
 * `…_APIKEY`, `…_KEY` or `…_TOKEN` (or just `API_KEY`, `KEY`, `TOKEN`), any case.
 * The key is sent to the configured server, so a name like HOME, PATH or USER
 * — readable, but not a key — is refused rather than sent as a bearer token.
 */
const apiKeyEnvName = z.string().regex(/^(?:[A-Za-z_][A-Za-z0-9_]*_)?(?:API_?KEY|KEY|TOKEN)$/i, {
  error: 'must name a variable that holds an API key: its name ends in _API_KEY, _KEY or _TOKEN, like OPENAI_API_KEY',
});

/** Per-turn deadline; the defaults are in `turnTimeoutMs`. */
const timeoutMs = z.number().int().min(1_000).max(3_600_000).optional();

const noSecretHere = z
  .never({ error: 'API keys do not belong in config.json: put the key in an environment variable and name it in "apiKeyEnv"' })
  .optional();

export const builtinAgentConfigSchema = z.strictObject({
  type: z.literal('builtin'),
  timeoutMs,
});

export const openAiAgentConfigSchema = z.strictObject({
  type: z.literal('openai'),
  baseUrl: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL, like http://127.0.0.1:11434/v1' }),
  model: z.string().min(1, { error: 'must name a model, like llama3.2' }),
  apiKeyEnv: apiKeyEnvName.optional(),
  systemPrompt: z.string().optional(),
  temperature: z.number().min(0).max(2).optional(),
  /** The model takes images (llava, Qwen-VL, Gemma 3…): a message's photos are sent to it as image content. */
  images: z.boolean().optional(),
  timeoutMs,
  apiKey: noSecretHere,
});

const processFields = {
  command: z.string().min(1, { error: 'must name a program' }),
  args: z.array(z.string()).default([]),
  cwd: z.string().optional(),
  /** Added to the gateway's environment; for settings, not secrets (the gateway's own environment is inherited). */
  env: z.record(envName, z.string()).optional(),
  timeoutMs,
};

export const commandAgentConfigSchema = z.strictObject({
  type: z.literal('command'),
  ...processFields,
});

export const acpAgentConfigSchema = z.strictObject({
  type: z.literal('acp'),
  ...processFields,
  /** The working directory announced to the agent in session/new; absolute. */
  sessionCwd: z.string().startsWith('/', { error: 'must be an absolute path' }).optional(),
});

export const agentConfigSchema = z.discriminatedUnion('type', [
  builtinAgentConfigSchema,
  openAiAgentConfigSchema,
  commandAgentConfigSchema,
  acpAgentConfigSchema,
]);

/** As validated (defaults applied). */
export type AgentConfig = z.output<typeof agentConfigSchema>;

export const DEFAULT_AGENT_CONFIG: AgentConfig = { type: 'builtin' };

/** Default per-turn deadlines: a local model or an agent using tools can take minutes. */
export const DEFAULT_TURN_TIMEOUT_MS: Record<AgentConfig['type'], number> = {
  builtin: 10_000,
  openai: 300_000,
  command: 300_000,
  acp: 900_000,
};

export function turnTimeoutMs(config: AgentConfig): number {
  return config.timeoutMs ?? DEFAULT_TURN_TIMEOUT_MS[config.type];
}
