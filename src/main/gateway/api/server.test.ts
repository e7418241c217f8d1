import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiClient } from '../../../shared/api-client';
import type { GatewayEvent } from '../../../shared/api';
import type { MessagePipe } from '../../../shared/protocol';
import { EventBus } from '../events';
import { Gateway } from '../gateway';
import { silentLogger } from '../logger';
import { ApiServer, MAX_BUFFERED_TOTAL, MAX_PENDING_PER_CONNECTION, MAX_QUEUED_TOTAL, type ApiHandlers } from './server';

/** Two connected in-memory pipes that deliver asynchronously, like a real port. */
function pipePair(): [MessagePipe, MessagePipe] {
  const make = () => ({ listeners: [] as ((m: unknown) => void)[], closers: [] as (() => void)[], closed: false });
  const a = make();
  const b = make();
  const side = (self: typeof a, other: typeof a): MessagePipe => ({
    send: (message) => {
      const copy = structuredClone(message);
      if (!other.closed) queueMicrotask(() => other.listeners.forEach((listener) => listener(copy)));
    },
    onMessage: (listener) => self.listeners.push(listener),
    onClose: (listener) => self.closers.push(listener),
    close: () => {
      for (const end of [self, other]) {
        if (end.closed) continue;
        end.closed = true;
        end.closers.forEach((listener) => listener());
      }
    },
  });
  return [side(a, b), side(b, a)];
}

describe('the API protocol between a window and the gateway', () => {
  let dataDir: string;
  let gateway: Gateway;
  let client: ApiClient;
  let raw: MessagePipe;
  const rawReplies: unknown[] = [];

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-api-'));
    gateway = Gateway.start({ dataDir, mode: 'headless', version: '9.9.9', logger: silentLogger, detectSleep: false, detectOllama: false });
    await gateway.ready;
    const [clientEnd, serverEnd] = pipePair();
    gateway.api.serve(serverEnd);
    client = new ApiClient({ callTimeoutMs: 2_000 });
    client.attach(clientEnd);
    const [rawEnd, rawServerEnd] = pipePair();
    gateway.api.serve(rawServerEnd);
    rawEnd.onMessage((message) => rawReplies.push(message));
    raw = rawEnd;
    rawReplies.length = 0;
  });

  afterEach(async () => {
    await gateway.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

  it('answers getStatus with the version, data directory, uptime and state from the core', async () => {
    const result = await client.api.getStatus();
    expect(result).toMatchObject({ ok: true, value: { version: '9.9.9', dataDir, state: 'running', mode: 'headless' } });
    if (result.ok) expect(result.value.uptimeMs).toBeGreaterThanOrEqual(0);
  });

  it('answers an unknown method with an error value', async () => {
    raw.send({ id: 1, method: 'dropTables' });
    await settle();
    expect(rawReplies).toEqual([{ id: 1, ok: false, error: { code: 'unknown-method', message: 'unknown method dropTables' } }]);
  });

  it('validates params on arrival', async () => {
    raw.send({ id: 2, method: 'getStatus', params: { everything: true } });
    await settle();
    expect(rawReplies).toMatchObject([{ id: 2, ok: false, error: { code: 'bad-request' } }]);
  });

  it('answers a malformed request that has an id, and drops one without', async () => {
    raw.send({ id: 3, method: 42 });
    raw.send('not even an object');
    raw.send(null);
    await settle();
    expect(rawReplies).toEqual([{ id: 3, ok: false, error: { code: 'bad-request', message: 'malformed request' } }]);
  });

  it('delivers events only to pipes that subscribed, until they unsubscribe', async () => {
    // Only the events this test emits (the gateway's periodic sweeps announce themselves too).
    const received: GatewayEvent[] = [];
    const unsubscribe = client.api.subscribe((event) => {
      if (event.type === 'gateway.state') received.push(event);
    });
    await settle();
    gateway.bus.emit({ type: 'gateway.state', state: 'running', at: 1 });
    await settle();
    expect(received).toEqual([{ type: 'gateway.state', state: 'running', at: 1 }]);
    expect(rawReplies).toEqual([]);
    unsubscribe();
    await settle();
    gateway.bus.emit({ type: 'gateway.state', state: 'running', at: 2 });
    await settle();
    expect(received).toHaveLength(1);
  });

  it('fails calls in flight with a value when the pipe closes, and queues calls until a pipe is attached', async () => {
    const lonely = new ApiClient({ callTimeoutMs: 2_000 });
    const queued = lonely.api.getStatus();
    const [clientEnd, serverEnd] = pipePair();
    gateway.api.serve(serverEnd);
    lonely.attach(clientEnd);
    expect((await queued).ok).toBe(true);

    const inFlight = lonely.api.getStatus();
    clientEnd.close();
    expect(await inFlight).toMatchObject({ ok: false, error: { code: 'disconnected' } });
  });

  it('times out with a value when nobody answers', async () => {
    const lonely = new ApiClient({ callTimeoutMs: 20 });
    expect(await lonely.api.getStatus()).toMatchObject({ ok: false, error: { code: 'timeout' } });
  });
});

describe('the limits on one connection', () => {
  it('answers `busy` beyond the pending cap, and takes requests again once answers went out', async () => {
    const waiting: (() => void)[] = [];
    const handlers = { getStatus: () => new Promise((resolve) => waiting.push(() => resolve('status'))) } as unknown as ApiHandlers;
    const server = new ApiServer(handlers, new EventBus(silentLogger), silentLogger);
    const [raw, serverEnd] = pipePair();
    server.serve(serverEnd);
    const replies: { id: number; ok: boolean; error?: { code: string } }[] = [];
    raw.onMessage((message) => replies.push(message as (typeof replies)[number]));

    for (let id = 0; id < MAX_PENDING_PER_CONNECTION + 3; id++) raw.send({ id, method: 'getStatus' });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(waiting).toHaveLength(MAX_PENDING_PER_CONNECTION);
    expect(replies.map((reply) => [reply.id, reply.error?.code])).toEqual([
      [MAX_PENDING_PER_CONNECTION, 'busy'],
      [MAX_PENDING_PER_CONNECTION + 1, 'busy'],
      [MAX_PENDING_PER_CONNECTION + 2, 'busy'],
    ]);

    waiting.shift()!();
    await new Promise((resolve) => setTimeout(resolve, 10));
    raw.send({ id: 'again', method: 'getStatus' });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(waiting).toHaveLength(MAX_PENDING_PER_CONNECTION);
    expect(replies.at(-1)).toMatchObject({ id: 0, ok: true, value: 'status' });
  });

  it('answers a message nested 1 000 levels deep (any pipe) with a named error, without calling the handler', async () => {
    let called = false;
    const handlers = { setConfig: () => (called = true) } as unknown as ApiHandlers;
    const server = new ApiServer(handlers, new EventBus(silentLogger), silentLogger);
    const [raw, serverEnd] = pipePair();
    server.serve(serverEnd);
    const replies: unknown[] = [];
    raw.onMessage((message) => replies.push(message));
    let deep: unknown = 1;
    for (let i = 0; i < 1_000; i++) deep = { a: deep };
    raw.send({ id: 1, method: 'setConfig', params: { config: deep } });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(replies).toEqual([{ id: 1, ok: false, error: { code: 'bad-request', message: 'the message nests deeper than 64 levels' } }]);
    expect(called).toBe(false);
  });
});

describe('the limits across connections', () => {
  const tick = (ms = 10) => new Promise((resolve) => setTimeout(resolve, ms));

  /** A server whose getTranscript waits until the test lets it answer, counting calls; getStatus answers at once. */
  function slowTranscripts() {
    const waiting: (() => void)[] = [];
    const asked: string[] = [];
    const handlers = {
      getStatus: () => 'status',
      getTranscript: (params: { sessionId: string }) => {
        asked.push(params.sessionId);
        return new Promise((resolve) => waiting.push(() => resolve(`page of ${params.sessionId}`)));
      },
    } as unknown as ApiHandlers;
    const server = new ApiServer(handlers, new EventBus(silentLogger), silentLogger);
    const connect = (buffered = () => 0) => {
      const [raw, serverEnd] = pipePair();
      server.serve({ ...serverEnd, bufferedBytes: buffered });
      const replies: { id: unknown; ok: boolean; value?: unknown; error?: { code: string } }[] = [];
      raw.onMessage((message) => replies.push(message as (typeof replies)[number]));
      return { raw, replies };
    };
    return { server, waiting, asked, connect };
  }

  it('builds one large answer at a time across every connection, and answers status at once meanwhile', async () => {
    const { waiting, asked, connect } = slowTranscripts();
    const a = connect();
    const b = connect();
    a.raw.send({ id: 1, method: 'getTranscript', params: { sessionId: 'a1' } });
    b.raw.send({ id: 1, method: 'getTranscript', params: { sessionId: 'b1' } });
    a.raw.send({ id: 2, method: 'getTranscript', params: { sessionId: 'a2' } });
    await tick();
    expect(asked).toEqual(['a1']);
    b.raw.send({ id: 2, method: 'getStatus' });
    await tick();
    expect(b.replies).toEqual([{ id: 2, ok: true, value: 'status' }]);
    waiting.shift()!();
    await tick();
    expect(asked).toEqual(['a1', 'b1']);
    waiting.shift()!();
    await tick();
    waiting.shift()!();
    await tick();
    expect(asked).toEqual(['a1', 'b1', 'a2']);
    expect(a.replies.map((reply) => reply.value)).toEqual(['page of a1', 'page of a2']);
  });

  it('drops the queued requests of a connection that closed before they run', async () => {
    const { server, waiting, asked, connect } = slowTranscripts();
    const a = connect();
    const gone = connect();
    a.raw.send({ id: 1, method: 'getTranscript', params: { sessionId: 'a1' } });
    for (let id = 0; id < 40; id++) gone.raw.send({ id, method: 'getTranscript', params: { sessionId: `gone${id}` } });
    a.raw.send({ id: 2, method: 'getTranscript', params: { sessionId: 'a2' } });
    await tick();
    expect(server.queued).toBe(41);
    gone.raw.close();
    expect(server.queued).toBe(1);
    waiting.shift()!();
    await tick();
    waiting.shift()!();
    await tick();
    expect(asked).toEqual(['a1', 'a2']);
  });

  it(`answers \`busy\` beyond ${MAX_QUEUED_TOTAL} large requests of every connection together`, async () => {
    const { server, connect } = slowTranscripts();
    const clients = Array.from({ length: Math.ceil((MAX_QUEUED_TOTAL + 20) / MAX_PENDING_PER_CONNECTION) + 1 }, () => connect());
    let sent = 0;
    for (const client of clients) for (let id = 0; id < MAX_PENDING_PER_CONNECTION && sent < MAX_QUEUED_TOTAL + 21; id++, sent++) client.raw.send({ id, method: 'getTranscript', params: { sessionId: 's' } });
    // MAX_QUEUED_TOTAL were taken (one of them is running now); the others are told to come back.
    // Waited for, not timed: a loaded machine may take more than a tick to read them all.
    await vi.waitFor(() => {
      const busy = clients.flatMap((client) => client.replies).filter((reply) => reply.error?.code === 'busy');
      expect(busy).toHaveLength(21);
      expect(server.queued).toBe(MAX_QUEUED_TOTAL - 1);
    });
  });

  it('holds large answers back while the connections together have too much unread', async () => {
    const { waiting, asked, connect } = slowTranscripts();
    let unread = MAX_BUFFERED_TOTAL + 1;
    const slowReader = connect(() => unread);
    let closed = false;
    slowReader.raw.onClose(() => (closed = true));
    const reader = connect();
    reader.raw.send({ id: 1, method: 'getTranscript', params: { sessionId: 'r1' } });
    await tick(100);
    expect(asked).toEqual([]);
    unread = 0; // it caught up
    await tick(50);
    expect(asked).toEqual(['r1']);
    waiting.shift()!();
    await tick();
    expect(reader.replies).toEqual([{ id: 1, ok: true, value: 'page of r1' }]);
    expect(closed).toBe(false);
  });

  it('closes the connection furthest behind in reading once it has held the large answers back for 5 s', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'setImmediate', 'Date'] });
    try {
      const { asked, connect } = slowTranscripts();
      const slowReader = connect(() => MAX_BUFFERED_TOTAL + 1);
      let closed = false;
      slowReader.raw.onClose(() => (closed = true));
      const reader = connect();
      reader.raw.send({ id: 1, method: 'getTranscript', params: { sessionId: 'r1' } });
      await vi.advanceTimersByTimeAsync(4_000);
      expect(closed).toBe(false);
      expect(asked).toEqual([]);
      await vi.advanceTimersByTimeAsync(2_000);
      expect(closed).toBe(true);
      expect(asked).toEqual(['r1']);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a client that can never connect', () => {
  it('fails every call at once with the reason, instead of waiting for the timeout', async () => {
    const client = new ApiClient({ callTimeoutMs: 60_000 });
    client.refuse('no access token');
    expect(await client.api.getStatus()).toEqual({ ok: false, error: { code: 'disconnected', message: 'no access token' } });
  });
});
