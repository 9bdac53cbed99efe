/** A loopback webhook receiver for push-notification tests: records every POST it gets. */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Statuses to answer with, in order; once used up, 200. */
  respondWith(...statuses: number[]): void;
  /** Received notifications for one channel id. */
  forChannel(channelId: string): Received[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const statuses: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        path: req.url ?? '/',
        method: req.method ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      res.writeHead(statuses.shift() ?? 200);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks/google`,
    received,
    respondWith: (...s) => {
      statuses.push(...s);
    },
    forChannel: (id) => received.filter((r) => r.headers['x-goog-channel-id'] === id),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The headers that matter of a notification, for compact assertions. */
export const summary = (r: Received) => ({
  state: r.headers['x-goog-resource-state'],
  number: Number(r.headers['x-goog-message-number']),
  token: r.headers['x-goog-channel-token'],
});
