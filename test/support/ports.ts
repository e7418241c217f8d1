import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A port on 127.0.0.1 that nothing listens on, just freed: for a server a test
 * is about to start there, or for one that is down (connections are refused).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Whether something accepts connections on 127.0.0.1 at `port` now. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Listens on 127.0.0.1:`port` for a relay that closes and opens its port again
 * (a server that is down, then back): the port was ours a moment ago, and a
 * just-closed listener may hold it for a tick, so the listen is retried.
 */
export async function listenAgain(port: number, onConnection: (socket: Socket) => void): Promise<Server> {
  for (let attempt = 1; ; attempt++) {
    const server = createServer(onConnection);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
      server.on('error', () => {});
      return server;
    } catch (error) {
      if (attempt >= 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** Refuses new connections from now on; connections already taken stay up (`server.close`'s callback waits for those: not awaited). */
export async function stopListening(server: Server | undefined): Promise<void> {
  server?.close();
  await new Promise((resolve) => setImmediate(resolve));
}
