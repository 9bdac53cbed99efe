/** A webhook receiver over real HTTP that checks Standard Webhooks signatures, for delivery tests. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  body: { scheduleId: string; occurrence: string; prompt: string; repetition: number; agentId?: string };
  at: number;
  verified: boolean;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Answer this status (default 200); `down` closes connections without answering. */
  answer: number | 'down';
  retryAfter?: string;
  /** Milliseconds to wait before answering. */
  delayMs: number;
  close(): Promise<void>;
}

export async function startReceiver(secret: () => string): Promise<Receiver> {
  const received: Received[] = [];
  const receiver: Receiver = {
    url: '',
    received,
    answer: 200,
    delayMs: 0,
    close: async () => {},
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (receiver.answer === 'down') {
        request.socket.destroy();
        return;
      }
      const text = Buffer.concat(chunks).toString('utf8');
      let verified = false;
      try {
        new Webhook(secret()).verify(text, {
          'webhook-id': String(request.headers['webhook-id']),
          'webhook-timestamp': String(request.headers['webhook-timestamp']),
          'webhook-signature': String(request.headers['webhook-signature']),
        });
        verified = true;
      } catch {
        verified = false;
      }
      const status = receiver.answer;
      setTimeout(() => {
        if (status >= 200 && status < 300) {
          received.push({
            id: String(request.headers['webhook-id']),
            body: JSON.parse(text),
            at: Date.now(),
            verified,
          });
        }
        response.writeHead(
          status,
          receiver.retryAfter === undefined ? {} : { 'retry-after': receiver.retryAfter },
        );
        response.end();
      }, receiver.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** Polls until `check` returns something truthy; throws after `timeoutMs`. */
export async function until<T>(check: () => T | Promise<T>, timeoutMs = 20_000, stepMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`condition not met within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}
