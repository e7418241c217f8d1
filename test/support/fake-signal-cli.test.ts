import { connect, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeSignalCli } from './fake-signal-cli';
import { waitUntil } from './wait';

/** A raw line client: what goes over the socket, byte for byte as JSON lines. */
class LineClient {
  readonly lines: Record<string, unknown>[] = [];
  private buffer = '';
  private nextId = 1;
  constructor(readonly socket: Socket) {
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => {
      this.buffer += chunk.toString();
      for (let i = this.buffer.indexOf('\n'); i !== -1; i = this.buffer.indexOf('\n')) {
        this.lines.push(JSON.parse(this.buffer.slice(0, i)) as Record<string, unknown>);
        this.buffer = this.buffer.slice(i + 1);
      }
    });
  }
  static async open(port: number): Promise<LineClient> {
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise((resolve) => socket.once('connect', resolve));
    return new LineClient(socket);
  }
  async call(method: string, params?: object): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    this.socket.write(`${JSON.stringify({ jsonrpc: '2.0', method, id, ...(params ? { params } : {}) })}\n`);
    await waitUntil(`the answer to ${method}`, () => this.lines.some((line) => line.id === id), 10_000);
    return this.lines.find((line) => line.id === id)!;
  }
}

describe('the fake signal-cli daemon (its facts: test/fixtures/signal-cli.md)', () => {
  let fake: FakeSignalCli;
  const clients: LineClient[] = [];
  beforeEach(async () => {
    fake = await new FakeSignalCli().start();
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.socket.destroy();
    await fake.stop();
  });
  const open = async () => {
    const client = await LineClient.open(fake.port);
    clients.push(client);
    return client;
  };

  it('answers version, getUserStatus and listGroups in signal-cli’s shapes, and -32601/-32700 for what it does not know', async () => {
    const client = await open();
    expect(await client.call('version')).toEqual({ jsonrpc: '2.0', result: { version: '0.13.22' }, id: 1 });
    const status = await client.call('getUserStatus', { recipient: [fake.account.number] });
    expect(status.result).toEqual([{ recipient: fake.account.number, number: fake.account.number, uuid: fake.account.uuid, isRegistered: true }]);
    const alice = fake.addPerson('alice');
    const group = fake.addGroup('Family', [alice]);
    expect(group.id).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(((await client.call('listGroups')).result as { id: string }[])[0]!.id).toBe(group.id);
    expect((await client.call('frobnicate')).error).toEqual({ code: -32601, message: 'Method not implemented', data: null });
    client.socket.write('not json\n');
    await waitUntil('the parse error', () => client.lines.some((line) => (line.error as { code?: number } | undefined)?.code === -32700 && line.id === null));
  });

  it('in manual mode keeps messages in the queue until receive takes them, one per maxMessages, and hands each once', async () => {
    const alice = fake.addPerson('alice');
    const first = fake.userSays({ from: alice, text: 'one' });
    fake.userSays({ from: alice, text: 'two' });
    const client = await open();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(client.lines).toEqual([]);
    expect(fake.queue).toHaveLength(2);
    const answer = await client.call('receive', { timeout: 1, maxMessages: 1 });
    const items = answer.result as { envelope: Record<string, unknown>; account: string }[];
    expect(items).toHaveLength(1);
    expect(items[0]!.account).toBe(fake.account.number);
    expect(items[0]!.envelope).toMatchObject({ sourceNumber: alice.number, sourceUuid: alice.uuid, timestamp: first.timestamp, dataMessage: { message: 'one', timestamp: first.timestamp } });
    expect(fake.queue).toHaveLength(1);
    expect(((await client.call('receive', { timeout: 1 })).result as unknown[]).length).toBe(1);
    const empty = await client.call('receive', { timeout: 0.2 });
    expect(empty.result).toEqual([]);
    expect([...fake.handed.values()].map((times) => times.length)).toEqual([1, 1]);
  });

  it('in manual mode pushes to a subscribed connection as {subscription, result}, and keeps messages queued once it is gone', async () => {
    const alice = fake.addPerson('alice');
    fake.userSays({ from: alice, text: 'before subscribing' });
    const client = await open();
    const subscribed = await client.call('subscribeReceive');
    expect(subscribed.result).toEqual(expect.any(Number));
    await waitUntil('the queued message pushed', () => client.lines.some((line) => line.method === 'receive'));
    const pushed = client.lines.find((line) => line.method === 'receive')!;
    expect(pushed).toMatchObject({ params: { subscription: subscribed.result, result: { envelope: { dataMessage: { message: 'before subscribing' } }, account: fake.account.number } } });
    expect((await client.call('unsubscribeReceive', { subscription: 999 })).error).toMatchObject({ code: -1, message: 'Unknown subscription id' });
    client.socket.destroy();
    await waitUntil('the subscription ended with the connection', () => fake.subscribers === 0, 5_000);
    fake.userSays({ from: alice, text: 'after it went' });
    expect(fake.queue.map((entry) => entry.timestamp)).toHaveLength(1);
    expect(fake.lost).toEqual([]);
  });

  it('refuses a second receive while one waits, and answers a send meanwhile', async () => {
    const alice = fake.addPerson('alice');
    const client = await open();
    const waiting = client.call('receive', { timeout: 2 });
    const second = await client.call('receive', { timeout: 1 });
    expect(second.error).toMatchObject({ code: -1, message: 'Receive command cannot be used if messages are already being received.' });
    const sent = await client.call('send', { recipient: [alice.number], message: 'hi' });
    expect(sent.result).toMatchObject({ timestamp: expect.any(Number), results: [{ type: 'SUCCESS', recipientAddress: { number: alice.number } }] });
    fake.userSays({ from: alice, text: 'late' });
    expect(((await waiting).result as unknown[]).length).toBe(1);
  });

  it('loses what it took for a client that went away before the answer, as signal-cli does', async () => {
    const alice = fake.addPerson('alice');
    const client = await open();
    client.socket.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'receive', id: 1, params: { timeout: 2 } })}\n`);
    await waitUntil('the receive waiting', () => fake.requests.some((request) => request.method === 'receive'));
    client.socket.destroy();
    await waitUntil('the server saw the client go', () => fake.connectedClients === 0, 5_000);
    // The receive still runs (to its timeout) and takes what arrives; its answer has nowhere to go.
    const said = fake.userSays({ from: alice, text: 'into the void' });
    await waitUntil('the message lost', () => fake.lost.includes(said.timestamp), 5_000);
    expect(fake.queue).toHaveLength(0);
    expect(fake.handed.has(said.timestamp)).toBe(false);
  });

  it('in automatic mode pushes every message to the connected clients as a notification, drops it with none, and refuses receive', async () => {
    await fake.stop();
    fake = await new FakeSignalCli({ receiveMode: 'on-start' }).start();
    const alice = fake.addPerson('alice');
    const nobody = fake.userSays({ from: alice, text: 'nobody listens' });
    expect(fake.lost).toEqual([nobody.timestamp]);
    const client = await open();
    fake.userSays({ from: alice, text: 'pushed' });
    await waitUntil('the notification', () => client.lines.some((line) => line.method === 'receive'));
    const notification = client.lines.find((line) => line.method === 'receive')!;
    expect(notification).toMatchObject({ jsonrpc: '2.0', params: { envelope: { dataMessage: { message: 'pushed' } }, account: fake.account.number } });
    expect(notification).not.toHaveProperty('id');
    expect((await client.call('receive', { timeout: 1 })).error).toMatchObject({ code: -1 });
  });

  it('answers send errors as signal-cli does: rate limit, untrusted identity, unregistered user, bad text style, quote without author', async () => {
    const alice = fake.addPerson('alice');
    const gone = fake.addPerson('gone', { registered: false });
    const client = await open();
    fake.rateLimitNext(1, 3);
    const limited = await client.call('send', { recipient: [alice.number], message: 'x' });
    expect(limited.error).toMatchObject({ code: -5, message: 'Failed to send message due to rate limiting', data: { response: { results: [{ type: 'RATE_LIMIT_FAILURE', retryAfterSeconds: 3 }] } } });
    fake.distrust(alice);
    expect((await client.call('send', { recipient: [alice.number], message: 'x' })).error).toMatchObject({ code: -4, message: 'Failed to send message due to untrusted identities' });
    expect((await client.call('send', { recipient: [gone.number], message: 'x' })).error).toMatchObject({ code: -1, message: `The user ${gone.number} is not registered.` });
    expect((await client.call('send', { recipient: [gone.number], message: 'x', textStyle: ['0:1:LOUD'] })).error).toMatchObject({ code: -1, message: 'Invalid style: LOUD' });
    expect((await client.call('send', { recipient: [alice.number], message: 'x', quoteTimestamp: 5 })).error).toMatchObject({ code: -1, message: 'Quote author parameter is missing' });
    expect(fake.sent).toEqual([]);
  });

  it('lists a message’s files as JsonAttachment does and serves them with getAttachment as base64, with signal-cli’s errors', async () => {
    const alice = fake.addPerson('alice');
    const photo = Buffer.from('\xff\xd8\xff photo bytes', 'latin1');
    const { attachmentIds } = fake.userSays({ from: alice, text: '', attachments: [{ bytes: photo, mime: 'image/jpeg' }, { bytes: Buffer.from('%PDF'), mime: 'application/pdf', name: 'a b.pdf', caption: 'see' }] });
    const client = await open();
    const items = (await client.call('receive', { timeout: 1 })).result as { envelope: { dataMessage: { message: unknown; attachments: Record<string, unknown>[] } } }[];
    const data = items[0]!.envelope.dataMessage;
    expect(data.message).toBeNull();
    expect(attachmentIds[0]).toMatch(/^[A-Za-z0-9_-]{20}\.jpg$/);
    expect(attachmentIds[1]).toMatch(/^[A-Za-z0-9_-]{20}\.pdf$/);
    expect(data.attachments).toEqual([
      { contentType: 'image/jpeg', filename: null, id: attachmentIds[0], size: photo.length, width: null, height: null, caption: null, uploadTimestamp: expect.any(Number) },
      { contentType: 'application/pdf', filename: 'a b.pdf', id: attachmentIds[1], size: 4, width: null, height: null, caption: 'see', uploadTimestamp: expect.any(Number) },
    ]);
    const served = await client.call('getAttachment', { id: attachmentIds[0], recipient: alice.number });
    expect(Buffer.from((served.result as { data: string }).data, 'base64').equals(photo)).toBe(true);
    expect((await client.call('getAttachment', { id: 'nope.jpg', recipient: alice.number })).error).toEqual({ code: -1, message: 'Could not find attachment with ID: nope.jpg', data: null });
    expect((await client.call('getAttachment', { recipient: alice.number })).error).toMatchObject({ code: -1, message: 'Missing attachment id parameter' });
    fake.forgetAttachment(attachmentIds[1]!);
    expect((await client.call('getAttachment', { id: attachmentIds[1] })).error).toMatchObject({ code: -1, message: `Could not find attachment with ID: ${attachmentIds[1]}` });
    expect(fake.downloads.map((download) => download.status)).toEqual(['served', 'not-found', 'missing-id', 'not-found']);
  });

  it('holds getAttachment answers until released, and answers other calls meanwhile', async () => {
    const alice = fake.addPerson('alice');
    const { attachmentIds } = fake.userSays({ from: alice, text: 'x', attachments: [{ bytes: Buffer.from('abc'), mime: 'text/plain', name: 'a.txt' }] });
    const client = await open();
    const release = fake.holdDownloads();
    client.socket.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'getAttachment', id: 99, params: { id: attachmentIds[0] } })}\n`);
    await waitUntil('the download logged', () => fake.downloads.length === 1, 5_000);
    expect((await client.call('version')).result).toEqual({ version: '0.13.22' });
    expect(client.lines.some((line) => line.id === 99)).toBe(false);
    expect(fake.downloads[0]!.status).toBe('held');
    release();
    await waitUntil('the held answer', () => client.lines.some((line) => line.id === 99), 5_000);
    expect(client.lines.find((line) => line.id === 99)!.result).toEqual({ data: Buffer.from('abc').toString('base64') });
  });

  it('keeps its queue across a restart on the same port, as Signal’s server does', async () => {
    const alice = fake.addPerson('alice');
    const port = fake.port;
    await fake.stop();
    fake.userSays({ from: alice, text: 'while the daemon was down' });
    await fake.start(port);
    const client = await open();
    const items = (await client.call('receive', { timeout: 1 })).result as { envelope: { dataMessage: { message: string } } }[];
    expect(items.map((item) => item.envelope.dataMessage.message)).toEqual(['while the daemon was down']);
  });
});
