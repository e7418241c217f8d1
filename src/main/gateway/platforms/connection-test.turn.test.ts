import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAiStub, STUB_MODEL, type OpenAiStub } from '../../../../test/support/openai-stub';
import type { SecretName, SecretStore } from '../secrets/secret-store';
import { testConnection } from './connection-test';

const noSecrets: SecretStore = { get: (_name: SecretName) => undefined, set() {}, delete() {}, names: () => [] };

let stub: OpenAiStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

/** The setup flow's "try it": one real test message to the agent, and its answer shown. */
describe('Test connection with a test turn', () => {
  it('runs one message through an OpenAI-compatible server and returns the answer', async () => {
    stub = await startOpenAiStub((request) => `Hello! I read: ${request.messages.at(-1)?.content.slice(0, 20)}`);
    const config = { type: 'openai', baseUrl: stub.baseUrl, model: STUB_MODEL };
    const result = await testConnection('agent', config, { secrets: noSecrets, env: {}, turn: true });
    expect(result).toEqual({ ok: true, message: `${STUB_MODEL} at ${stub.baseUrl} answered a test message`, answer: 'Hello! I read: This is a connection' });
    expect(stub.requests).toHaveLength(1);
  });

  it('without turn only asks for the model list (no message sent)', async () => {
    stub = await startOpenAiStub(() => 'never');
    const result = await testConnection('agent', { type: 'openai', baseUrl: stub.baseUrl, model: STUB_MODEL }, { secrets: noSecrets, env: {} });
    expect(result).toEqual({ ok: true, message: `${stub.baseUrl} answers and has ${STUB_MODEL}` });
    expect(stub.requests).toHaveLength(0);
  });

  it('says so when the server lists the model but the message does not come back in time', async () => {
    stub = await startOpenAiStub(() => new Promise<string>(() => {}));
    const result = await testConnection('agent', { type: 'openai', baseUrl: stub.baseUrl, model: STUB_MODEL }, { secrets: noSecrets, env: {}, turn: true, timeoutMs: 1_000 });
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(/did not answer a test message within 1 s/);
  });

  it('shows what the built-in agent answers', async () => {
    const result = await testConnection('agent', { type: 'builtin' }, { secrets: noSecrets, env: {}, turn: true });
    expect(result.ok).toBe(true);
    expect(result.answer).toMatch(/\S/);
  });
});
