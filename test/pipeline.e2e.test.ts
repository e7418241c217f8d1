import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startGatewayHarness, type GatewayHarness } from './support/gateway-harness';

const COMMAND_AGENT = fileURLToPath(new URL('../src/main/gateway/agents/fixtures/command-agent.mjs', import.meta.url));

describe('the pipeline, end to end in one process', () => {
  let harness: GatewayHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  async function send(text: string) {
    const result = await harness!.gateway.api.dispatch('sendLocalMessage', { text });
    if (!result.ok) throw new Error(result.error.message);
    return (result.value as { messageRef: string }).messageRef;
  }

  it('answers a local message with the built-in agent, and transcript and ledger agree', async () => {
    harness = await startGatewayHarness();
    await send('hello there');
    const recorded = await harness.waitFor('reply.recorded');
    const delivered = await harness.waitFor(
      'delivery.changed',
      (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'delivered',
    );
    expect(delivered.delivery).toMatchObject({ platform: 'local', chunksDelivered: 1, chunksTotal: 1, attempts: 0 });
    // The reply streamed before it was recorded.
    const tokens = harness.events.filter((event) => event.type === 'turn.token');
    expect(tokens.length).toBeGreaterThan(1);
    const finished = await harness.waitFor('turn.finished');
    expect(finished).toMatchObject({ outcome: 'answered', error: null });

    const transcript = await harness.gateway.api.dispatch('getTranscript', { sessionId: recorded.sessionId });
    if (!transcript.ok) throw new Error(transcript.error.message);
    const messages = (transcript.value as { messages: { role: string; text: string; obligationId?: string }[] }).messages;
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(messages[0]!.text).toBe('hello there');
    expect(messages[1]!.text).toMatch(/built-in agent/i);
    expect(messages[1]!.obligationId).toBe(recorded.obligationId);
    expect(harness.gateway.deliveries.ledger.owedCount()).toBe(0);
    const overview = await harness.gateway.api.dispatch('getOverview', undefined);
    expect(overview).toMatchObject({
      ok: true,
      value: {
        state: 'running',
        deliveries: { owed: 0, deliveredLastDay: 1, abandoned: 0, failedPermanently: 0 },
        turnsRunning: 0,
        platforms: [{ name: 'local', state: 'connected', error: null }],
        ledger: { ok: true },
        lastSweep: { report: expect.objectContaining({ owed: 0 }) },
      },
    });
  });

  it('answers the messages of one conversation in order, each seeing the ones before', async () => {
    harness = await startGatewayHarness({ agent: { type: 'command', command: process.execPath, args: [COMMAND_AGENT, 'echo'] } });
    await send('first');
    await send('second');
    await send('third');
    const finishedAll = async () => {
      while (harness!.events.filter((event) => event.type === 'delivery.changed' && event.delivery.state === 'delivered').length < 3) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await finishedAll();
    const recorded = harness.events.filter((event) => event.type === 'reply.recorded');
    const transcript = await harness.gateway.api.dispatch('getTranscript', { sessionId: recorded[0]!.sessionId });
    if (!transcript.ok) throw new Error(transcript.error.message);
    const texts = (transcript.value as { messages: { role: string; text: string }[] }).messages.map((m) => `${m.role}:${m.text.trim()}`);
    // Saved on arrival, in order; the replies follow as the agent gives them.
    expect(texts.filter((text) => text.startsWith('user:'))).toEqual(['user:first', 'user:second', 'user:third']);
    const replies = texts.filter((text) => text.startsWith('assistant:'));
    expect(replies).toHaveLength(3);
    expect(replies[0]).toMatch(/history \[\]; message first/);
    // Each answer saw the earlier messages with their answers, in conversation order, and not the later ones.
    expect(replies[1]).toMatch(/history \[user:first \| assistant:[^|]*message first; version 1\]; message second/);
    expect(replies[2]).toMatch(/history \[user:first \| assistant:.* \| user:second \| assistant:.*\]; message third/);
    expect(texts.indexOf('user:first')).toBeLessThan(texts.indexOf(replies[0]!));
  });

  it('answers a blank reply from the agent with the agent-error text, delivered like any reply, never an empty message', async () => {
    harness = await startGatewayHarness({ agent: { type: 'command', command: process.execPath, args: [COMMAND_AGENT, 'empty'] } });
    await send('say nothing');
    const recorded = await harness.waitFor('reply.recorded');
    const delivered = await harness.waitFor('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'delivered');
    expect(delivered.delivery.preview).toMatch(/^⚠ The agent /);
    const text = await harness.gateway.api.dispatch('getDeliveryText', { id: recorded.obligationId });
    expect(text.ok && (text.value as { text: string }).text.trim().length).toBeGreaterThan(0);
  });

  it('turns an agent failure into a short error reply, recorded and delivered like any reply', async () => {
    harness = await startGatewayHarness({ agent: { type: 'command', command: process.execPath, args: [COMMAND_AGENT, 'fail'] } });
    await send('please fail');
    const finished = await harness.waitFor('turn.finished');
    expect(finished.outcome).toBe('agent-error');
    expect(finished.error).toBeTruthy();
    const recorded = await harness.waitFor('reply.recorded');
    await harness.waitFor('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'delivered');
    const transcript = await harness.gateway.api.dispatch('getTranscript', { sessionId: recorded.sessionId });
    const messages = transcript.ok ? (transcript.value as { messages: { role: string; text: string }[] }).messages : [];
    expect(messages[1]!.text).toMatch(/^⚠ The agent failed: /);
  });

  it('keeps running when the agent server is unreachable, and says so in the reply', async () => {
    harness = await startGatewayHarness({ agent: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'nothing' } });
    await send('anyone there?');
    const finished = await harness.waitFor('turn.finished');
    expect(finished.outcome).toBe('agent-error');
    const recorded = await harness.waitFor('reply.recorded');
    const transcript = await harness.gateway.api.dispatch('getTranscript', { sessionId: recorded.sessionId });
    const messages = transcript.ok ? (transcript.value as { messages: { role: string; text: string }[] }).messages : [];
    expect(messages[1]!.text).toMatch(/could not reach the agent.*127\.0\.0\.1:9/);
    expect((await harness.gateway.api.dispatch('getStatus', undefined)).ok).toBe(true);
  });

  it('starts a new conversation on /new, keeping the old transcript', async () => {
    harness = await startGatewayHarness();
    await send('remember me');
    const first = await harness.waitFor('reply.recorded');
    await send('/new');
    const second = await harness.waitFor('reply.recorded', (event) => event.sessionId !== first.sessionId);
    const sessions = await harness.gateway.api.dispatch('listSessions', undefined);
    const list = sessions.ok ? (sessions.value as { sessions: { sessionId: string; current: boolean }[] }).sessions : [];
    expect(list.map((session) => [session.sessionId, session.current])).toEqual(
      expect.arrayContaining([
        [first.sessionId, false],
        [second.sessionId, true],
      ]),
    );
    // The old conversation's transcript is still there, whole.
    const old = await harness.gateway.api.dispatch('getTranscript', { sessionId: first.sessionId });
    const texts = old.ok ? (old.value as { messages: { text: string }[] }).messages.map((message) => message.text) : [];
    expect(texts[0]).toBe('remember me');
    expect(texts).toHaveLength(2);
  });

  it('uses a replaced API key from the next turn on', async () => {
    const seen: (string | undefined)[] = [];
    const server = createServer((request, response) => {
      seen.push(request.headers.authorization);
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'ok' } }] })}\n\ndata: [DONE]\n\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      harness = await startGatewayHarness({ agent: { type: 'openai', baseUrl, model: 'm' } });
      for (const key of ['sk-first', 'sk-second']) {
        const set = await harness.gateway.api.dispatch('setSecret', { name: 'agent.apiKey', value: key });
        expect(set.ok).toBe(true);
        const finished = harness.waitForNext('turn.finished');
        await send(`with ${key}`);
        expect((await finished).outcome).toBe('answered');
      }
      expect(seen).toEqual(['Bearer sk-first', 'Bearer sk-second']);
    } finally {
      server.close();
    }
  });

  it('runs on the defaults with a bad config file, shows why, and refuses a bad config from the API', async () => {
    harness = await startGatewayHarness();
    writeFileSync(join(harness.dataDir, 'config.json'), '{ "agent": { "type": "openai", "model": 3 } }');
    await harness.gateway.config.reload();
    const view = await harness.gateway.api.dispatch('getConfig', undefined);
    expect(view).toMatchObject({ ok: true, value: { error: expect.stringMatching(/agent\.baseUrl/) } });
    // Still answering, on the last good config.
    await send('still there?');
    await harness.waitFor('delivery.changed', (event) => event.delivery.state === 'delivered');

    const bad = await harness.gateway.api.dispatch('setConfig', { config: { maxConcurrentTurns: 'many' } });
    expect(bad).toMatchObject({ ok: false, error: { code: 'bad-request', message: expect.stringMatching(/maxConcurrentTurns/) } });
    // A valid config is not written over the file's hand-made error either: the user is told, and fixes the file first.
    const overHandEdits = await harness.gateway.api.dispatch('setConfig', { config: { maxConcurrentTurns: 2 } });
    expect(overHandEdits).toMatchObject({ ok: false, error: { code: 'conflict', message: expect.stringMatching(/edits made to it by hand/) } });
    expect(readFileSync(join(harness.dataDir, 'config.json'), 'utf8')).toBe('{ "agent": { "type": "openai", "model": 3 } }');
    rmSync(join(harness.dataDir, 'config.json'));
    const good = await harness.gateway.api.dispatch('setConfig', { config: { maxConcurrentTurns: 2 } });
    expect(good).toMatchObject({ ok: true, value: { error: null, config: { maxConcurrentTurns: 2 } } });
  });

  it('offers a running Ollama server at first run, and nothing once a config exists', async () => {
    harness = await startGatewayHarness(null, { detectOllama: async () => ['llama3.2:latest', 'qwen3'] });
    const view = await harness.gateway.api.dispatch('getConfig', undefined);
    expect(view).toMatchObject({
      ok: true,
      value: {
        suggestion: {
          agent: { type: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2:latest' },
          reason: expect.stringMatching(/Ollama/),
        },
      },
    });
    await harness.gateway.api.dispatch('setConfig', { config: {} });
    const after = await harness.gateway.api.dispatch('getConfig', undefined);
    expect(after).toMatchObject({ ok: true, value: { suggestion: null } });
  });

  it('cancels a running turn from the API, and tells the user', async () => {
    harness = await startGatewayHarness({ agent: { type: 'command', command: process.execPath, args: [COMMAND_AGENT, 'slow'] } });
    await send('take your time');
    const started = await harness.waitFor('turn.started');
    const cancel = await harness.gateway.api.dispatch('cancelTurn', { sessionId: started.sessionId });
    expect(cancel).toEqual({ ok: true, value: { cancelled: true } });
    const finished = await harness.waitFor('turn.finished');
    expect(finished.outcome).toBe('cancelled');
    const recorded = await harness.waitFor('reply.recorded');
    await harness.waitFor('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'delivered');
    expect(await harness.gateway.api.dispatch('cancelTurn', { sessionId: started.sessionId })).toEqual({ ok: true, value: { cancelled: false } });
  });
});
