/** A TCP relay for tests that need a server's connections to drop at a chosen moment. */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface Relay {
  /** `target` with host and port replaced by the relay's. */
  url: string;
  /** Resets every relayed connection and stops listening: clients see a refused connection. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
}

/** A TCP relay in front of a server, to drop every connection to it at a chosen moment. */
export async function cuttableRelay(target: string): Promise<Relay> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let listenPort = 0;
  const restore = () =>
    new Promise<void>((resolve, reject) => {
      const next = createServer((client) => {
        const upstream = connect(Number(port), hostname);
        for (const [socket, peer] of [
          [client, upstream],
          [upstream, client],
        ] as const) {
          sockets.add(socket);
          // One side gone (e.g. the server refused) takes the other with it, as on a real path.
          socket.on('close', () => {
            sockets.delete(socket);
            peer.destroy();
          });
          socket.on('error', () => {});
        }
        client.pipe(upstream).pipe(client);
      });
      next.once('error', reject);
      next.listen(listenPort, '127.0.0.1', () => {
        const address = next.address();
        listenPort = typeof address === 'object' && address !== null ? address.port : 0;
        server = next;
        resolve();
      });
    });
  await restore();
  return {
    url: target.replace(`${hostname}:${port}`, `127.0.0.1:${listenPort}`),
    restore,
    async cut() {
      const closing = server;
      server = undefined;
      for (const socket of sockets) {
        socket.resetAndDestroy();
      }
      await new Promise<void>((resolve) => (closing ? closing.close(() => resolve()) : resolve()));
    },
  };
}
