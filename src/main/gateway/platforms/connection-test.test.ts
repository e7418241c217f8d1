import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../logger';
import { FileSecretStore } from '../secrets/secret-store';
import { testConnection } from './connection-test';

let server: Server | undefined;
let dir: string | undefined;
afterEach(() => {
  server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** An OpenAI-compatible /models that answers only the key `sk-right`. */
async function keyedServer(): Promise<string> {
  server = createServer((request, response) => {
    if (request.headers.authorization !== 'Bearer sk-right') {
      response.writeHead(401).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ id: 'llama3.2' }] }));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

function secrets(apiKey?: string): FileSecretStore {
  dir = mkdtempSync(join(tmpdir(), 'homing-connection-test-'));
  const store = new FileSecretStore(dir, silentLogger);
  if (apiKey) store.set('agent.apiKey', apiKey);
  return store;
}

describe('Test connection for an OpenAI-compatible agent', () => {
  it('sends the saved API key, so a server that needs one answers', async () => {
    const baseUrl = await keyedServer();
    const config = { type: 'openai', baseUrl, model: 'llama3.2' };
    expect(await testConnection('agent', config, { secrets: secrets('sk-right'), env: {} })).toEqual({ ok: true, message: `${baseUrl} answers and has llama3.2` });
    expect(await testConnection('agent', config, { secrets: secrets('sk-wrong'), env: {} })).toEqual({ ok: false, message: `${baseUrl} refused the API key (401)` });
  });

  it('sends the key from the environment variable the config names', async () => {
    const baseUrl = await keyedServer();
    const config = { type: 'openai', baseUrl, model: 'llama3.2', apiKeyEnv: 'HOMING_TEST_KEY' };
    expect(await testConnection('agent', config, { secrets: secrets(), env: { HOMING_TEST_KEY: 'sk-right' } })).toMatchObject({ ok: true });
  });
});
