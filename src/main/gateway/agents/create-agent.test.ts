import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, AgentResult } from './agent.js';
import { agentConfigSchema, turnTimeoutMs, type AgentConfig } from './config-schema.js';
import { createAgent, type CreateAgentDeps } from './create-agent.js';
import { runTurnWithTimeout } from './timeout.js';

const servers: Server[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

function parse(input: unknown) {
  const result = agentConfigSchema.safeParse(input);
  return result.success
    ? { ok: true as const, config: result.data }
    : { ok: false as const, issues: result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) };
}

function build(config: AgentConfig, deps: CreateAgentDeps = {}): Agent {
  const created = createAgent(config, deps);
  if (!created.ok) throw new Error(created.error);
  agents.push(created.agent);
  return created.agent;
}

function ask(agent: Agent, text: string): Promise<AgentResult> {
  return runTurnWithTimeout(agent, { sessionId: 's', history: [], message: { role: 'user', text }, onToken: () => {} }, { timeoutMs: 10_000 });
}

/** A chat-completions server that records the Authorization header it was sent. */
async function keyRecordingServer() {
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    headers.push(req.headers);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"choices":[{"index":0,"delta":{"content":"pong"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n');
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, headers };
}

describe('agent config schema', () => {
  it('accepts each agent type and applies defaults', () => {
    expect(parse({ type: 'builtin' })).toEqual({ ok: true, config: { type: 'builtin' } });
    expect(parse({ type: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2', apiKeyEnv: 'OPENAI_API_KEY', temperature: 0.7 })).toMatchObject({ ok: true });
    expect(parse({ type: 'command', command: '/usr/local/bin/my-agent' })).toEqual({ ok: true, config: { type: 'command', command: '/usr/local/bin/my-agent', args: [] } });
    expect(parse({ type: 'acp', command: 'npx', args: ['some-acp-agent'], sessionCwd: '/home/me' })).toMatchObject({ ok: true });
  });

  it('refuses an API key written into the config, naming the field and where the key belongs', () => {
    expect(parse({ type: 'openai', baseUrl: 'https://api.example.com/v1', model: 'm', apiKey: 'sk-live-1' })).toEqual({
      ok: false,
      issues: [{ path: 'apiKey', message: expect.stringContaining('apiKeyEnv') }],
    });
  });

  it('names the field of a bad base URL, a missing model, a bad env name and an unknown type', () => {
    expect(parse({ type: 'openai', baseUrl: 'ftp://x', model: 'm' })).toMatchObject({ ok: false, issues: [{ path: 'baseUrl', message: expect.stringContaining('http://') }] });
    expect(parse({ type: 'openai', baseUrl: 'http://x/v1' })).toMatchObject({ ok: false, issues: [{ path: 'model' }] });
    expect(parse({ type: 'openai', baseUrl: 'http://x/v1', model: 'm', apiKeyEnv: 'not a name' })).toMatchObject({ ok: false, issues: [{ path: 'apiKeyEnv' }] });
    expect(parse({ type: 'skynet' })).toMatchObject({ ok: false, issues: [{ path: 'type' }] });
    expect(parse({ type: 'command', command: 'x', shell: true })).toMatchObject({ ok: false });
  });

  it('gives each agent type a turn timeout, overridable per config', () => {
    expect(turnTimeoutMs({ type: 'builtin' })).toBe(10_000);
    expect(turnTimeoutMs({ type: 'command', command: 'x', args: [], timeoutMs: 5_000 })).toBe(5_000);
  });
});

describe('createAgent', () => {
  it('builds the built-in agent with the injected status provider', async () => {
    const agent = build({ type: 'builtin' }, { status: () => ({ version: '9.9.9', uptimeMs: 0, platforms: [], owed: 0 }) });
    expect(agent.kind).toBe('builtin');
    expect(await ask(agent, '/status')).toMatchObject({ ok: true, text: expect.stringContaining('Homing 9.9.9') });
  });

  it('resolves apiKeyEnv from the injected environment and sends it as the bearer token', async () => {
    const server = await keyRecordingServer();
    const agent = build({ type: 'openai', baseUrl: server.baseUrl, model: 'm', apiKeyEnv: 'MY_KEY' }, { env: { MY_KEY: 'sk-from-env' } });
    expect(await ask(agent, 'ping')).toEqual({ ok: true, text: 'pong' });
    expect(server.headers[0]!.authorization).toBe('Bearer sk-from-env');
  });

  it('prefers the key from the secret store over apiKeyEnv', async () => {
    const server = await keyRecordingServer();
    const agent = build({ type: 'openai', baseUrl: server.baseUrl, model: 'm', apiKeyEnv: 'MY_KEY' }, { apiKey: 'sk-stored', env: { MY_KEY: 'sk-from-env' } });
    await ask(agent, 'ping');
    expect(server.headers[0]!.authorization).toBe('Bearer sk-stored');
  });

  it('fails clearly, naming the variable, when apiKeyEnv is not set', () => {
    expect(createAgent({ type: 'openai', baseUrl: 'http://127.0.0.1:1/v1', model: 'm', apiKeyEnv: 'MISSING_KEY' }, { env: {} })).toEqual({
      ok: false,
      error: 'agent.apiKeyEnv names MISSING_KEY, but that environment variable is not set',
    });
  });

  it('builds a command agent that runs the configured program', async () => {
    const agent = build({ type: 'command', command: process.execPath, args: ['-e', 'process.stdout.write("from the command")'] });
    expect(agent.kind).toBe('command');
    expect(await ask(agent, 'x')).toEqual({ ok: true, text: 'from the command' });
  });

  it('builds an ACP agent that talks to the configured program', async () => {
    const fixture = fileURLToPath(new URL('./fixtures/acp-agent.mjs', import.meta.url));
    const agent = build({ type: 'acp', command: process.execPath, args: [fixture] }, { version: '0.1.0' });
    expect(agent.kind).toBe('acp');
    expect(await ask(agent, 'hi')).toMatchObject({ ok: true, text: expect.stringMatching(/#1: hi$/) });
  });
});
