import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../logger';
import { FileSecretStore } from '../secrets/secret-store';
import { emailPlatformSchema } from './email/config-schema';
import { testConnection } from './connection-test';
import { FakeSpeech } from '../../../../test/support/fake-speech';

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
  it('sends the saved API key to the server it was saved for, so a server that needs one answers', async () => {
    const baseUrl = await keyedServer();
    const config = { type: 'openai', baseUrl, model: 'llama3.2' } as const;
    expect(await testConnection('agent', config, { secrets: secrets('sk-right'), env: {}, savedAgent: config })).toEqual({
      ok: true,
      message: `${baseUrl} answers and has llama3.2`,
    });
    expect(await testConnection('agent', config, { secrets: secrets('sk-wrong'), env: {}, savedAgent: config })).toEqual({
      ok: false,
      message: `${baseUrl} refused the API key (401)`,
    });
  });

  it('sends the key from the environment variable the saved config names', async () => {
    const baseUrl = await keyedServer();
    const config = { type: 'openai', baseUrl, model: 'llama3.2', apiKeyEnv: 'HOMING_TEST_KEY' } as const;
    expect(await testConnection('agent', config, { secrets: secrets(), env: { HOMING_TEST_KEY: 'sk-right' }, savedAgent: config })).toMatchObject({ ok: true });
  });

  it('never sends a saved key to a server other than the one it was saved for (another port, or http for https)', async () => {
    const elsewhere = await recordingServer();
    const saved = { type: 'openai', baseUrl: 'https://api.example.com/v1', model: 'm', apiKeyEnv: 'HOMING_TEST_KEY' } as const;
    const form = { type: 'openai', baseUrl: elsewhere.baseUrl, model: 'm', apiKeyEnv: 'HOMING_TEST_KEY' };
    const result = await testConnection('agent', form, { secrets: secrets('sk-saved-secret'), env: { HOMING_TEST_KEY: 'sk-env-secret' }, savedAgent: saved });
    expect(result.message).toMatch(/no API key was sent: the saved one is for https:\/\/api\.example\.com; save these settings to test with it/);
    expect(elsewhere.authorizations).toEqual([undefined]);
    // The same host over plain http is another origin too.
    const plain = await testConnection('agent', { ...form }, { secrets: secrets('sk-saved-secret'), env: {}, savedAgent: { ...saved, baseUrl: elsewhere.baseUrl.replace('http:', 'https:') } });
    expect(plain.message).toMatch(/no API key was sent/);
    expect(elsewhere.authorizations).toEqual([undefined, undefined]);
  });

  it('reads an environment variable only as the saved config names it', async () => {
    const server = await recordingServer();
    const saved = { type: 'openai', baseUrl: server.baseUrl, model: 'm' } as const;
    const form = { type: 'openai', baseUrl: server.baseUrl, model: 'm', apiKeyEnv: 'OTHER_TOKEN' };
    const result = await testConnection('agent', form, { secrets: secrets(), env: { OTHER_TOKEN: 'secret-token' }, savedAgent: saved });
    expect(result.message).toMatch(/no API key was sent: save the settings to test with OTHER_TOKEN/);
    expect(server.authorizations).toEqual([undefined]);
  });

  it.each(['HOME', 'PATH', 'USER', 'SSH_AUTH_SOCK', 'KEYRING'])('refuses apiKeyEnv %s: it does not name an API key variable', async (name) => {
    const server = await recordingServer();
    const form = { type: 'openai', baseUrl: server.baseUrl, model: 'm', apiKeyEnv: name };
    const result = await testConnection('agent', form, { secrets: secrets(), env: { [name]: '/root' }, savedAgent: form as never });
    expect(result).toEqual({ ok: false, message: expect.stringMatching(/^agent\.apiKeyEnv: must name a variable that holds an API key/) });
    expect(server.authorizations).toEqual([]);
  });
});

/** An OpenAI-compatible /models that records the Authorization header of every request. */
async function recordingServer(): Promise<{ baseUrl: string; authorizations: (string | undefined)[] }> {
  const authorizations: (string | undefined)[] = [];
  server = createServer((request, response) => {
    authorizations.push(request.headers.authorization);
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ id: 'm' }] }));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, authorizations };
}

describe('Test connection for a command or ACP agent', () => {
  const fixture = (name: string) => fileURLToPath(new URL(`../agents/fixtures/${name}`, import.meta.url));

  it('fails for a program that does not exist, instead of calling the settings valid', async () => {
    const result = await testConnection('agent', { type: 'command', command: '/nonexistent/agent-program' }, { secrets: secrets(), env: {} });
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(/^\/nonexistent\/agent-program did not work: /);
  });

  it('starts the program and reports its answer to a test message', async () => {
    const result = await testConnection('agent', { type: 'command', command: process.execPath, args: [fixture('command-agent.mjs'), 'echo'] }, { secrets: secrets(), env: {} });
    expect(result).toEqual({ ok: true, message: expect.stringMatching(/started .* and it answered a test message: “session homing-connection-test; /) });
  });

  it('reports a program that fails, and one that never answers within the timeout', async () => {
    const failing = await testConnection('agent', { type: 'command', command: process.execPath, args: [fixture('command-agent.mjs'), 'fail'] }, { secrets: secrets(), env: {} });
    expect(failing).toMatchObject({ ok: false, message: expect.stringMatching(/did not work/) });
    const slow = await testConnection(
      'agent',
      { type: 'command', command: process.execPath, args: [fixture('command-agent.mjs'), 'slow'] },
      { secrets: secrets(), env: {}, timeoutMs: 500 },
    );
    expect(slow).toMatchObject({ ok: false, message: expect.stringMatching(/did not answer a test message within/) });
  });

  it('runs the ACP handshake and a prompt', async () => {
    const result = await testConnection('agent', { type: 'acp', command: process.execPath, args: [fixture('acp-agent.mjs')] }, { secrets: secrets(), env: {} });
    expect(result).toMatchObject({ ok: true, message: expect.stringMatching(/^started the ACP agent .* and it answered a test message/) });
  });
});

describe('Test connection for email', () => {
  const section = (imapHost: string, smtpHost = imapHost) => ({
    address: 'me@example.org',
    imap: { host: imapHost, port: 1, security: 'none' },
    smtp: { host: smtpHost, port: 1, security: 'none' },
  });

  it('never sends the saved mailbox password to servers other than the ones it was saved for', async () => {
    const store = secrets();
    store.set('email.password', 'mail-secret');
    const savedConfig = { platforms: { email: emailPlatformSchema.parse(section('mail.example.org')) } };
    const result = await testConnection('email', section('evil.example.net'), { secrets: store, env: {}, savedConfig, timeoutMs: 2_000 });
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(/saved password was not sent: it was saved for mail\.example\.org/);
    const smtpOnly = await testConnection('email', section('mail.example.org', 'evil.example.net'), { secrets: store, env: {}, savedConfig, timeoutMs: 2_000 });
    expect(smtpOnly.message).toMatch(/was not sent/);
  });

  it('names a bad field, and says when no password is saved', async () => {
    expect((await testConnection('email', { ...section('mail.example.org'), address: 'not an address' }, { secrets: secrets(), env: {} })).message).toMatch(/^platforms\.email\.address: /);
    expect((await testConnection('email', section('127.0.0.1'), { secrets: secrets(), env: {} })).message).toMatch(/no mailbox password is saved/);
  });
});

describe('Test connection for a speech server', () => {
  it('transcribes a test recording on an OpenAI-compatible speech server, and says why not when it cannot', async () => {
    const speech = await FakeSpeech.start({ defaultTranscript: '' });
    try {
      const ok = await testConnection('speech', { type: 'openai', url: speech.url }, { secrets: secrets(), env: {} });
      expect(ok).toEqual({ ok: true, message: 'the speech server transcribed a test recording' });
      expect(speech.requests.at(-1)?.contentType).toBe('audio/wav');
      speech.failNext(1, 500, 'model not loaded');
      const failed = await testConnection('speech', { type: 'openai', url: speech.url }, { secrets: secrets(), env: {} });
      expect(failed.ok).toBe(false);
      expect(failed.message).toMatch(/500/);
    } finally {
      await speech.close();
    }
  });

  it('names a bad field', async () => {
    const result = await testConnection('speech', { type: 'openai', url: 'file:///etc/passwd' }, { secrets: secrets(), env: {} });
    expect(result).toMatchObject({ ok: false, message: expect.stringMatching(/^speech\.url: /) });
  });
});
