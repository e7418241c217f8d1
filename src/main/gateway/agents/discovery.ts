import type { AgentServer } from '../../../shared/api';
import { readBodyLimited } from '../http-body';

/**
 * The local model servers a new user most likely runs, on their default
 * ports, all speaking the OpenAI API under /v1 (each documents `GET
 * /v1/models`): the setup flow asks each and lists what it finds, so picking
 * an agent is a click, not a URL to look up.
 */
export const USUAL_AGENT_SERVERS: readonly { readonly name: string; readonly port: number }[] = [
  { name: 'Ollama', port: 11434 },
  { name: 'LM Studio', port: 1234 },
  { name: 'llama.cpp', port: 8080 },
  { name: 'vLLM', port: 8000 },
];

/** The most bytes one server's model list may be (a hostile or confused server must not fill memory). */
const MAX_BODY_BYTES = 1024 * 1024;
const MAX_MODELS = 200;

/**
 * Asks every usual server on 127.0.0.1, at once, for its models; returns the
 * ones that answered with an OpenAI-style list, in the order above. Only
 * loopback, only GET, no key: nothing leaves the machine and no secret is sent.
 */
export async function findAgentServers(options: { readonly fetch?: typeof fetch; readonly timeoutMs?: number } = {}): Promise<AgentServer[]> {
  const found = await Promise.all(USUAL_AGENT_SERVERS.map((server) => ask(server, options.fetch ?? fetch, options.timeoutMs ?? 1_500)));
  return found.filter((server): server is AgentServer => server !== undefined);
}

async function ask(server: { readonly name: string; readonly port: number }, fetchImpl: typeof fetch, timeoutMs: number): Promise<AgentServer | undefined> {
  const baseUrl = `http://127.0.0.1:${server.port}/v1`;
  try {
    const response = await fetchImpl(`${baseUrl}/models`, { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
    if (!response.ok) return undefined;
    const text = await readBodyLimited(response, MAX_BODY_BYTES);
    if (text === undefined) return undefined;
    const body = JSON.parse(text) as { data?: unknown };
    if (!Array.isArray(body?.data)) return undefined;
    const models = body.data
      .map((entry: unknown) => (typeof entry === 'object' && entry !== null && typeof (entry as { id?: unknown }).id === 'string' ? (entry as { id: string }).id : undefined))
      .filter((id): id is string => id !== undefined && id.length > 0 && id.length <= 256)
      .slice(0, MAX_MODELS);
    return { name: server.name, baseUrl, models };
  } catch {
    return undefined;
  }
}
