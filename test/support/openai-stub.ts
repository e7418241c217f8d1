import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local OpenAI-compatible chat-completions server that records every request
 * and streams an answer in the real wire format (`data: {choices:[{delta}]}`
 * events, then `data: [DONE]`). Bodies are capped: it is a test server, not a
 * target. `answer` decides each reply from the request.
 */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly stream?: boolean;
}

export interface OpenAiStub {
  readonly baseUrl: string;
  readonly requests: ChatRequest[];
  close(): Promise<void>;
}

const MAX_BODY = 4 * 1024 * 1024;
/** The one model GET /v1/models lists. */
export const STUB_MODEL = 'stub-model';

/** Starts the stub on 127.0.0.1:`port` (0: any free port; rejects when the port is taken). */
export async function startOpenAiStub(answer: (request: ChatRequest) => string | Promise<string>, port = 0): Promise<OpenAiStub> {
  const requests: ChatRequest[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    let size = 0;
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      size += chunk.length;
      if (size > MAX_BODY) req.destroy();
      else raw += chunk;
    });
    req.on('error', () => {});
    req.on('end', async () => {
      // The model list every OpenAI-compatible server serves: Test connection and the setup flow read it.
      // Shape as in the OpenAI API reference (GET /v1/models: `{ object: 'list', data: [{ id, object: 'model', created,
      // owned_by }] }`), which Ollama (docs/openai.md), LM Studio, llama.cpp's server and vLLM follow; `created` is left out
      // (Homing reads only `id`).
      if (req.method === 'GET' && req.url?.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: STUB_MODEL, object: 'model', owned_by: 'stub' }] }));
        return;
      }
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      let request: ChatRequest;
      try {
        request = JSON.parse(raw) as ChatRequest;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'bad JSON' } }));
        return;
      }
      requests.push(request);
      const text = await answer(request);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const id = `chatcmpl-${requests.length}`;
      for (const piece of text.match(/[\s\S]{1,16}/g) ?? []) {
        res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model: request.model, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`);
      }
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model: request.model, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${bound}/v1`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
