/** One node:http server on loopback for an emulator's pipeline. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  /** Base URL without a trailing slash. */
  url: string;
  port: number;
  /** Aborted when `close` starts: delayed and hanging requests let go. */
  closing: AbortSignal;
  /** Stops listening and cuts open connections. */
  close(): Promise<void>;
}

export interface ListenOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
}

/**
 * Starts listening; `handler` receives the `closing` signal so it can be built after the URL
 * is known (admin helpers that hand out URLs need it).
 */
export async function listen(
  makeHandler: (
    closing: AbortSignal,
    url: () => string,
  ) => (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  options: ListenOptions = {},
  beforeClose: () => void = () => undefined,
): Promise<Listening> {
  const closing = new AbortController();
  let url = '';
  const handler = makeHandler(closing.signal, () => url);
  const server = createServer((req, res) => {
    handler(req, res).catch(() => {
      res.destroy();
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url,
    port,
    closing: closing.signal,
    close: () =>
      new Promise<void>((resolve, reject) => {
        closing.abort();
        beforeClose();
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
