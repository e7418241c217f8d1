import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { AdapterEvent } from '../src/main/gateway/platforms/adapter';
import { xmppConfigSchema } from '../src/main/gateway/platforms/xmpp/config-schema';
import { XmppAdapter } from '../src/main/gateway/platforms/xmpp/xmpp-adapter';
import { waitUntil } from './support/wait';

/**
 * The XMPP adapter against a server that misbehaves on the wire (a raw TCP
 * server on loopback speaking just enough XMPP to open a stream): a stanza
 * that never ends, and garbage. The adapter drops the connection with words
 * and keeps trying; the process never crashes and memory stays bounded.
 */

const STREAM_HEADER = `<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' id='x' from='localhost' version='1.0'>`;

describe('the XMPP adapter against a hostile server', () => {
  let server: Server | undefined;
  let adapter: XmppAdapter | undefined;
  const sockets = new Set<Socket>();

  afterEach(async () => {
    await adapter?.disconnect();
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    adapter = server = undefined;
  });

  async function serve(onStream: (socket: Socket) => void): Promise<number> {
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.once('data', () => onStream(socket));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return (server.address() as { port: number }).port;
  }

  function start(port: number): { events: AdapterEvent[] } {
    const events: AdapterEvent[] = [];
    adapter = new XmppAdapter({
      config: xmppConfigSchema.parse({ jid: 'homing@localhost', host: '127.0.0.1', port, security: 'none' }),
      password: 'pw',
      reconnectDelayMs: () => 100,
    });
    adapter.onEvent((event) => events.push(event));
    void adapter.connect();
    return { events };
  }

  it('drops a connection whose stanza grows past 1 MiB, says why, and tries again', async () => {
    let connections = 0;
    const port = await serve((socket) => {
      connections++;
      socket.write(STREAM_HEADER + '<message><body>');
      const chunk = 'x'.repeat(64 * 1024);
      let sent = 0;
      const pump = () => {
        while (sent < 3 * 1024 * 1024 && !socket.destroyed) {
          sent += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
      };
      pump();
    });
    const { events } = start(port);
    await waitUntil('the drop in words', () => events.some((event) => event.type === 'state' && event.state === 'disconnected' && /bigger than 1 MiB/.test(event.error ?? '')), 15_000);
    await waitUntil('a second try', () => connections >= 2, 15_000);
    expect(adapter!.state()).not.toBe('connected');
  });

  it('survives garbage instead of XML', async () => {
    let connections = 0;
    const port = await serve((socket) => {
      connections++;
      socket.write(STREAM_HEADER + '<<<>>>&&&</stream:nope>\u0000\u0001' + '<a><b></a>');
    });
    const { events } = start(port);
    await waitUntil('tried again after the garbage', () => connections >= 2, 15_000);
    expect(events.some((event) => event.type === 'state' && event.state === 'connected')).toBe(false);
  });
});
