import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentResult } from './agent.js';
import { createOpenAiAgent, detectOllama, type OpenAiAgentOptions } from './openai.js';
import { runTurnWithTimeout } from './timeout.js';
import { freePort } from '../../../../test/support/ports';

/** A local server that speaks the chat-completions wire format, one handler per test. */
interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse, received: Received) => void) {
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      const received: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: raw ? JSON.parse(raw) : undefined };
      requests.push(received);
      handler(req, res, received);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, root: `http://127.0.0.1:${port}`, requests };
}


const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function sseHead(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

function delta(content: string | undefined, extra: Record<string, unknown> = {}): string {
  const d = content === undefined ? { role: 'assistant' } : { content };
  return JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: d, finish_reason: null, ...extra }] });
}

async function run(options: Partial<OpenAiAgentOptions> & { baseUrl: string }, timeoutMs = 5_000, signal?: AbortSignal, onToken?: (t: string) => void) {
  const tokens: string[] = [];
  const agent = createOpenAiAgent({ model: 'llama3.2', ...options });
  const result: AgentResult = await runTurnWithTimeout(
    agent,
    {
      sessionId: 's1',
      history: [
        { role: 'user', text: 'my name is Ada' },
        { role: 'assistant', text: 'Hello Ada' },
      ],
      message: { role: 'user', text: 'what is my name?' },
      onToken: (t) => {
        tokens.push(t);
        onToken?.(t);
      },
    },
    { timeoutMs, signal, settleMs: 1_000 },
  );
  return { result, tokens };
}

describe('openai agent', () => {
  it('streams deltas split across TCP writes and sends model, system prompt, history, stream: true and the key', async () => {
    const server = await serve(async (_req, res) => {
      sseHead(res);
      const events = [
        `data: ${delta(undefined)}\n\n`,
        ': keep-alive\n\n',
        `data: ${delta('Your ')}\r\n\r\n`,
        `data: ${delta('name is')}\n\n`,
        `data: ${delta(' Ada.')}\n\n`,
        `data: ${JSON.stringify({ id: 'c1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
        `data: ${JSON.stringify({ id: 'c1', choices: [], usage: { prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 } })}\n\n`,
        'data: [DONE]\n\n',
      ].join('');
      // Cut the stream at awkward places, each piece its own TCP write.
      for (let i = 0; i < events.length; i += 37) {
        res.write(events.slice(i, i + 37));
        await sleep(2);
      }
      res.end();
    });
    const { result, tokens } = await run({ baseUrl: server.baseUrl, apiKey: 'sk-test-123', systemPrompt: 'Be brief.', temperature: 0.2 });
    expect(result).toEqual({ ok: true, text: 'Your name is Ada.' });
    expect(tokens).toEqual(['Your ', 'name is', ' Ada.']);

    expect(server.requests).toHaveLength(1);
    const [req] = server.requests;
    expect(req!.method).toBe('POST');
    expect(req!.url).toBe('/v1/chat/completions');
    expect(req!.headers.authorization).toBe('Bearer sk-test-123');
    expect(req!.body).toEqual({
      model: 'llama3.2',
      stream: true,
      temperature: 0.2,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'my name is Ada' },
        { role: 'assistant', content: 'Hello Ada' },
        { role: 'user', content: 'what is my name?' },
      ],
    });
  });

  it('sends no Authorization header and no system message when none are configured', async () => {
    const server = await serve((_req, res) => {
      sseHead(res);
      res.end(`data: ${delta('ok')}\n\ndata: [DONE]\n\n`);
    });
    const { result } = await run({ baseUrl: server.baseUrl + '/' });
    expect(result).toEqual({ ok: true, text: 'ok' });
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
    expect((server.requests[0]!.body as { messages: { role: string }[] }).messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  });

  it('accepts a non-streaming JSON completion from a server that ignores stream: true', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Whole reply.' }, finish_reason: 'stop' }] }));
    });
    const { result, tokens } = await run({ baseUrl: server.baseUrl });
    expect(result).toEqual({ ok: true, text: 'Whole reply.' });
    expect(tokens).toEqual(['Whole reply.']);
  });

  function errorServer(status: number, body: unknown, headers: Record<string, string> = {}) {
    return serve((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    });
  }

  it('says the server refused the API key on 401, with the server message and without the key', async () => {
    const server = await errorServer(401, { error: { message: 'Incorrect API key provided: sk-secret-999', type: 'invalid_request_error', code: 'invalid_api_key' } });
    const { result } = await run({ baseUrl: server.baseUrl, apiKey: 'sk-secret-999' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.kind).toBe('failed');
    expect(result.error).toMatch(/^the server refused the API key \(HTTP 401\): Incorrect API key provided/);
    expect(result.error).not.toContain('sk-secret-999');
  });

  it('says the server refused the API key on 403', async () => {
    const server = await errorServer(403, { error: { message: 'forbidden', type: 'permission_error', code: null } });
    const { result } = await run({ baseUrl: server.baseUrl, apiKey: 'k' });
    expect(result).toMatchObject({ ok: false, kind: 'failed', error: 'the server refused the API key (HTTP 403): forbidden' });
  });

  it('names the model and base URL on 404 (Ollama-style string error body)', async () => {
    const server = await errorServer(404, { error: 'model "llama3.2" not found, try pulling it first' });
    const { result } = await run({ baseUrl: server.baseUrl });
    expect(result).toMatchObject({ ok: false, kind: 'failed' });
    if (result.ok) return;
    expect(result.error).toContain('HTTP 404');
    expect(result.error).toContain('"llama3.2"');
    expect(result.error).toContain(server.baseUrl);
    expect(result.error).toContain('try pulling it first');
  });

  it('reports rate limiting on 429 with the Retry-After delay', async () => {
    const server = await errorServer(429, { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after': '30' });
    const { result } = await run({ baseUrl: server.baseUrl });
    expect(result).toEqual({ ok: false, kind: 'failed', error: 'the server is rate-limiting requests (HTTP 429); retry after 30 s: Rate limit reached' });
  });

  it('reports a server failure on 500 with an HTML body as a short excerpt', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/html' });
      res.end('<html><body>Internal   Server Error</body></html>');
    });
    const { result } = await run({ baseUrl: server.baseUrl });
    expect(result).toEqual({ ok: false, kind: 'failed', error: 'the server failed (HTTP 500): <html><body>Internal Server Error</body></html>' });
  });

  it('times out against a server that never answers', async () => {
    const server = await serve(() => {});
    const started = Date.now();
    const { result } = await run({ baseUrl: server.baseUrl }, 300);
    expect(result).toMatchObject({ ok: false, kind: 'timeout' });
    // The request was aborted at 300 ms: sooner than the 1 s settle deadline that would force a result anyway.
    expect(Date.now() - started).toBeLessThan(1_200);
  });

  it('times out against a server that stops mid-stream, keeping the socket open', async () => {
    const server = await serve((_req, res) => {
      sseHead(res);
      res.write(`data: ${delta('partial')}\n\n`);
    });
    const { result, tokens } = await run({ baseUrl: server.baseUrl }, 300);
    expect(tokens).toEqual(['partial']);
    expect(result).toMatchObject({ ok: false, kind: 'timeout' });
  });

  it('is cancelled mid-stream by the caller, and the server sees the connection close', async () => {
    let serverSawClose!: () => void;
    const closed = new Promise<void>((resolve) => (serverSawClose = resolve));
    const server = await serve((_req, res) => {
      sseHead(res);
      res.on('close', () => serverSawClose());
      res.write(`data: ${delta('first')}\n\n`);
    });
    const controller = new AbortController();
    const { result, tokens } = await run({ baseUrl: server.baseUrl }, 5_000, controller.signal, () => controller.abort());
    expect(tokens).toEqual(['first']);
    expect(result).toMatchObject({ ok: false, kind: 'cancelled' });
    await closed;
  });

  it('reports an unreachable server, naming the URL, when the connection is refused', async () => {
    const baseUrl = `http://127.0.0.1:${await freePort()}/v1`;
    const { result } = await run({ baseUrl });
    expect(result).toEqual({ ok: false, kind: 'unreachable', error: `could not reach ${baseUrl} (connection refused: nothing listens there (is the server running?) (ECONNREFUSED))` });
  });

  it('gives bad-response for a 200 reply that is not an event stream', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('hello, I am not an API\n\x00\x01garbage');
    });
    const { result } = await run({ baseUrl: server.baseUrl });
    expect(result).toMatchObject({ ok: false, kind: 'bad-response' });
    if (!result.ok) expect(result.error).toContain('not a chat-completions event stream');
  });

  it('gives bad-response for a stream whose events are not JSON', async () => {
    const server = await serve((_req, res) => {
      sseHead(res);
      res.end(`data: ${delta('fine')}\n\ndata: {oops not json\n\ndata: [DONE]\n\n`);
    });
    const { result } = await run({ baseUrl: server.baseUrl });
    expect(result).toMatchObject({ ok: false, kind: 'bad-response' });
  });

  it('reports an error event sent mid-stream', async () => {
    const server = await serve((_req, res) => {
      sseHead(res);
      res.end(`data: ${delta('so')}\n\ndata: {"error":{"message":"out of memory","type":"server_error"}}\n\n`);
    });
    const { result } = await run({ baseUrl: server.baseUrl });
    expect(result).toEqual({ ok: false, kind: 'failed', error: 'the server reported an error mid-reply: out of memory' });
  });

  it('fails a stream that ends without [DONE] or a finish_reason (a cut-off reply)', async () => {
    const server = await serve((_req, res) => {
      sseHead(res);
      res.end(`data: ${delta('half a rep')}\n\n`);
    });
    const { result } = await run({ baseUrl: server.baseUrl });
    expect(result).toMatchObject({ ok: false, kind: 'failed' });
    if (!result.ok) expect(result.error).toContain('ended before the reply was complete');
  });

  it('gives bad-response for an empty reply', async () => {
    const server = await serve((_req, res) => {
      sseHead(res);
      res.end(`data: ${delta(undefined)}\n\ndata: [DONE]\n\n`);
    });
    const { result } = await run({ baseUrl: server.baseUrl });
    expect(result).toMatchObject({ ok: false, kind: 'bad-response', error: expect.stringContaining('empty') });
  });
});

describe('detectOllama', () => {
  it('lists the models of a server answering GET /api/tags', async () => {
    const server = await serve((req, res) => {
      res.writeHead(req.url === '/api/tags' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ models: [{ name: 'llama3.2:latest', model: 'llama3.2:latest', size: 1 }, { name: 'qwen2.5:7b' }] }));
    });
    expect(await detectOllama(fetch, server.root)).toEqual(['llama3.2:latest', 'qwen2.5:7b']);
    expect(server.requests[0]).toMatchObject({ method: 'GET', url: '/api/tags' });
  });

  it('gives undefined when nothing listens', async () => {
    expect(await detectOllama(fetch, `http://127.0.0.1:${await freePort()}`)).toBeUndefined();
  });

  it('gives undefined within its timeout when the server hangs', async () => {
    const server = await serve(() => {});
    const started = Date.now();
    expect(await detectOllama(fetch, server.root, 200)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('gives undefined for a server that is not Ollama', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>router admin</html>');
    });
    expect(await detectOllama(fetch, server.root)).toBeUndefined();
  });
});
