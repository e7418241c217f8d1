import type { Agent } from './agent.js';
import { createAcpAgent } from './acp.js';
import { createBuiltinAgent, type StatusProvider } from './builtin.js';
import { createCommandAgent } from './command.js';
import type { AgentConfig } from './config-schema.js';
import { createOpenAiAgent } from './openai.js';
import type { ProcessTracker } from './process-group.js';

export interface CreateAgentDeps {
  /** The API key from the secret store, if the user saved one there; wins over `apiKeyEnv`. */
  readonly apiKey?: string | undefined;
  /** Where `apiKeyEnv` is looked up; `process.env` unless a test injects one. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** For the built-in agent's /status. */
  readonly status?: StatusProvider | undefined;
  /** Homing's version, announced to ACP agents. */
  readonly version?: string | undefined;
  readonly fetch?: typeof fetch | undefined;
  /** Records the command and ACP agents' processes, so a crash cannot leave them running for good. */
  readonly processes?: ProcessTracker | undefined;
}

export type CreateAgentResult = { readonly ok: true; readonly agent: Agent } | { readonly ok: false; readonly error: string };

/** Builds the configured agent. Fails only on what config validation cannot see (a missing environment variable). */
export function createAgent(config: AgentConfig, deps: CreateAgentDeps = {}): CreateAgentResult {
  switch (config.type) {
    case 'builtin':
      return { ok: true, agent: createBuiltinAgent({ status: deps.status }) };
    case 'openai': {
      let apiKey = deps.apiKey;
      if (apiKey === undefined && config.apiKeyEnv !== undefined) {
        apiKey = (deps.env ?? process.env)[config.apiKeyEnv];
        // Named but unset is a mistake worth stopping for; the error names the variable, never a value.
        if (!apiKey) return { ok: false, error: `agent.apiKeyEnv names ${config.apiKeyEnv}, but that environment variable is not set` };
      }
      return {
        ok: true,
        agent: createOpenAiAgent({
          baseUrl: config.baseUrl,
          model: config.model,
          apiKey,
          images: config.images,
          systemPrompt: config.systemPrompt,
          temperature: config.temperature,
          fetch: deps.fetch,
        }),
      };
    }
    case 'command':
      return {
        ok: true,
        agent: createCommandAgent({
          command: config.command,
          args: config.args,
          cwd: config.cwd,
          env: config.env,
          tracker: deps.processes,
        }),
      };
    case 'acp':
      return {
        ok: true,
        agent: createAcpAgent({
          command: config.command,
          args: config.args,
          cwd: config.cwd,
          env: config.env,
          sessionCwd: config.sessionCwd,
          clientVersion: deps.version,
          tracker: deps.processes,
        }),
      };
    default: {
      const unknown: never = config;
      return { ok: false, error: `unknown agent type ${JSON.stringify((unknown as { type?: unknown }).type)}` };
    }
  }
}
