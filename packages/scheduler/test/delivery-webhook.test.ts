import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import {
  backoff,
  generateWebhookSecret,
  type HostResolver,
  promptDuePayload,
  sendWebhook,
  type WebhookDelivery,
  type WebhookOutcome,
  type WebhookSenderOptions,
} from '../src/index.ts';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  url: string;
  port: number;
  received: Received[];
}

const open: Array<() => Promise<void>> = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((close) => close()));
});

/** A real HTTP server on loopback that records each request, then answers with `handler`. */
async function receiver(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      handler(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks/calgate?token=s3cr3t-query`, port, received };
}

const answer =
  (status: number, headers: Record<string, string> = {}, body = '') =>
  (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, headers);
    res.end(body);
  };

const secret = generateWebhookSecret();
const payload = promptDuePayload({
  scheduleId: 'sch_7Fq2',
  occurrence: new Date('2026-03-01T09:00:00Z'),
  prompt: 'Review today’s calendar',
  agentId: 'agent-42',
  repetition: 3,
});

function delivery(url: string, extra: Partial<WebhookDelivery> = {}): WebhookDelivery {
  return { targetId: 'tgt_9xY', url, secret, messageId: 'sch_7Fq2.1772355600', payload, ...extra };
}

const local: WebhookSenderOptions = { allowPrivate: true, backoff: { baseMs: 1000, random: () => 0 } };

function expectNoLeak(outcome: WebhookOutcome) {
  if (outcome.kind === 'delivered') {
    return;
  }
  const text = `${outcome.error.message} ${JSON.stringify(outcome.error.context)}`;
  expect(text).not.toContain('s3cr3t-query');
  expect(text).not.toContain(secret.slice(6));
  expect(outcome.error.message).toContain('tgt_9xY');
}

describe('sendWebhook: delivered', () => {
  it('POSTs the signed JSON payload, which the official package verifies', async () => {
    const hook = await receiver(answer(200, {}, 'ok'));
    const outcome = await sendWebhook(delivery(hook.url), local);
    expect(outcome).toMatchObject({ kind: 'delivered', status: 200 });
    expect(hook.received).toHaveLength(1);
    const [request] = hook.received;
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['webhook-id']).toBe('sch_7Fq2.1772355600');
    expect(request?.headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(request?.headers['webhook-signature']).toMatch(/^v1,/);
    const verified = new Webhook(secret).verify(
      request?.body ?? '',
      request?.headers as Record<string, string>,
    );
    expect(verified).toEqual({
      type: 'prompt.due',
      scheduleId: 'sch_7Fq2',
      occurrence: '2026-03-01T09:00:00.000Z',
      prompt: 'Review today’s calendar',
      agentId: 'agent-42',
      repetition: 3,
    });
    expect(() =>
      new Webhook(generateWebhookSecret()).verify(
        request?.body ?? '',
        request?.headers as Record<string, string>,
      ),
    ).toThrow('No matching signature');
  });

  it('treats every 2xx as delivered', async () => {
    for (const status of [201, 202, 204]) {
      const hook = await receiver(answer(status));
      expect(await sendWebhook(delivery(hook.url), local)).toMatchObject({ kind: 'delivered', status });
    }
  });

  it('sends the same webhook-id again on a retry, each attempt verifying', async () => {
    const hook = await receiver(answer(200));
    await sendWebhook(delivery(hook.url), local);
    await sendWebhook(delivery(hook.url, { attempt: 2 }), local);
    expect(hook.received.map((r) => r.headers['webhook-id'])).toEqual([
      'sch_7Fq2.1772355600',
      'sch_7Fq2.1772355600',
    ]);
    for (const r of hook.received) {
      expect(new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).toMatchObject({
        repetition: 3,
      });
    }
  });

  it('signs with the injected clock', async () => {
    const at = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
    const hook = await receiver(answer(200));
    await sendWebhook(delivery(hook.url), { ...local, now: () => at });
    expect(hook.received[0]?.headers['webhook-timestamp']).toBe(String(at.getTime() / 1000));
  });
});

describe('sendWebhook: 410 disables, other 4xx and 3xx are final', () => {
  it('asks to disable the target on 410 Gone', async () => {
    const hook = await receiver(answer(410));
    const outcome = await sendWebhook(delivery(hook.url), local);
    expect(outcome.kind).toBe('disable');
    if (outcome.kind === 'disable') {
      expect(outcome.error.message).toBe(
        'webhook target tgt_9xY answered 410 Gone; the target should be disabled',
      );
      expect(outcome.error.context).toEqual({ targetId: 'tgt_9xY', status: 410 });
    }
    expectNoLeak(outcome);
  });

  it.each([
    [400, 'precondition_failed'],
    [401, 'permission_denied'],
    [403, 'permission_denied'],
    [404, 'not_found'],
    [409, 'conflict'],
    [413, 'precondition_failed'],
    [422, 'precondition_failed'],
  ])('fails for good on %s', async (status, code) => {
    const hook = await receiver(answer(status, { 'retry-after': '5' }));
    const outcome = await sendWebhook(delivery(hook.url), local);
    expect(outcome).toMatchObject({ kind: 'failed', status });
    if (outcome.kind === 'failed') {
      expect(outcome.error.code).toBe(code);
      expect(outcome.error.retry).toBe(false);
      expect(outcome.error.message).toBe(`webhook target tgt_9xY answered ${status}`);
    }
    expectNoLeak(outcome);
  });

  it('does not follow redirects', async () => {
    const target = await receiver(answer(200));
    const hook = await receiver(answer(307, { location: target.url }));
    const outcome = await sendWebhook(delivery(hook.url), local);
    expect(outcome).toMatchObject({ kind: 'failed', status: 307 });
    expect(outcome.kind !== 'delivered' && outcome.error.message).toBe(
      'webhook target tgt_9xY answered 307 (a redirect, which is not followed)',
    );
    expect(target.received).toHaveLength(0);
  });
});

describe('sendWebhook: retryable', () => {
  it.each([408, 429, 500, 502, 503, 504])(
    'retries %s after backoff(attempt) without Retry-After',
    async (status) => {
      const hook = await receiver(answer(status));
      const outcome = await sendWebhook(delivery(hook.url, { attempt: 3 }), local);
      expect(outcome).toMatchObject({
        kind: 'retry',
        status,
        retryInMs: backoff(3, { baseMs: 1000, random: () => 0 }),
        retryAfterHeader: false,
      });
      expect(outcome.kind === 'retry' && outcome.error).toMatchObject({
        code: 'upstream_unavailable',
        retry: true,
        retryAfterMs: 2000,
        message: `webhook target tgt_9xY answered ${status}`,
      });
      expectNoLeak(outcome);
    },
  );

  it('honours Retry-After in seconds', async () => {
    const hook = await receiver(answer(503, { 'retry-after': '120' }));
    const outcome = await sendWebhook(delivery(hook.url), local);
    expect(outcome).toMatchObject({ kind: 'retry', status: 503, retryInMs: 120_000, retryAfterHeader: true });
  });

  it('honours Retry-After as an HTTP date', async () => {
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    const hook = await receiver(
      answer(429, { 'retry-after': new Date(now.getTime() + 90_000).toUTCString() }),
    );
    const outcome = await sendWebhook(delivery(hook.url), { ...local, now: () => now });
    expect(outcome).toMatchObject({ kind: 'retry', status: 429, retryInMs: 90_000, retryAfterHeader: true });
    expect(
      new Webhook(secret).verify(
        hook.received[0]?.body ?? '',
        hook.received[0]?.headers as Record<string, string>,
      ),
    ).toBeTruthy();
  });

  it('shortens a Retry-After beyond the ceiling, and falls back to backoff on a malformed one', async () => {
    const far = await receiver(answer(503, { 'retry-after': '999999' }));
    expect(await sendWebhook(delivery(far.url), { ...local, maxRetryAfterMs: 600_000 })).toMatchObject({
      kind: 'retry',
      retryInMs: 600_000,
      retryAfterHeader: true,
    });
    const garbled = await receiver(answer(503, { 'retry-after': 'later' }));
    expect(await sendWebhook(delivery(garbled.url), local)).toMatchObject({
      kind: 'retry',
      retryInMs: 500,
      retryAfterHeader: false,
    });
  });

  it('retries when the receiver does not answer within the timeout', async () => {
    const hook = await receiver(() => undefined);
    const started = Date.now();
    const outcome = await sendWebhook(delivery(hook.url), { ...local, timeoutMs: 300 });
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(5000);
    expect(outcome).toMatchObject({ kind: 'retry', status: null, retryInMs: 500 });
    expect(outcome.kind === 'retry' && outcome.error.message).toBe(
      'webhook target tgt_9xY did not answer within 300 ms',
    );
    expect(outcome.kind === 'retry' && outcome.error.context.networkCode).toBe('TIMEOUT');
    expect(hook.received).toHaveLength(1);
  });

  it('retries when the connection is refused', async () => {
    const hook = await receiver(answer(200));
    await open.pop()?.();
    const outcome = await sendWebhook(delivery(hook.url), local);
    expect(outcome).toMatchObject({ kind: 'retry', status: null });
    expect(outcome.kind === 'retry' && outcome.error.message).toBe(
      'webhook target tgt_9xY could not be reached (ECONNREFUSED)',
    );
    expectNoLeak(outcome);
  });

  it('retries when the receiver drops the connection', async () => {
    const hook = await receiver((req) => req.socket.destroy());
    const outcome = await sendWebhook(delivery(hook.url), local);
    expect(outcome).toMatchObject({ kind: 'retry', status: null });
    expect(outcome.kind === 'retry' && outcome.error.context.networkCode).toBe('ECONNRESET');
  });

  it('retries when the caller aborts the attempt', async () => {
    const hook = await receiver(() => undefined);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const outcome = await sendWebhook(delivery(hook.url), { ...local, signal: controller.signal });
    expect(outcome.kind === 'retry' && outcome.error.message).toBe(
      'delivery to webhook target tgt_9xY was aborted',
    );
  });
});

describe('sendWebhook: refusals before any request', () => {
  it('refuses a loopback target unless private networks are allowed', async () => {
    const hook = await receiver(answer(200));
    const https = `https://127.0.0.1:${hook.port}/hooks?token=s3cr3t-query`;
    const outcome = await sendWebhook(delivery(https), { allowPrivate: false });
    // Blocked, not failed: a worker with OUTBOUND_ALLOW_PRIVATE on would deliver it.
    expect(outcome).toMatchObject({ kind: 'blocked', status: null });
    expect(outcome.kind === 'blocked' && outcome.error.code).toBe('permission_denied');
    expect(outcome.kind === 'blocked' && outcome.error.message).toBe(
      'webhook target tgt_9xY refused: target URL address 127.0.0.1 is a loopback address; Calgate refuses private targets unless TARGETS_ALLOW_PRIVATE=true (or OUTBOUND_ALLOW_PRIVATE=true)',
    );
    const plain = await sendWebhook(delivery(hook.url), { allowPrivate: false });
    expect(plain.kind).toBe('blocked');
    expect(plain.kind === 'blocked' && plain.error.message).toMatch(
      /loopback address; Calgate refuses private/,
    );
    const plainPublic = await sendWebhook(delivery('http://93.184.215.14/hook'), { allowPrivate: false });
    expect(plainPublic.kind === 'blocked' && plainPublic.error.code).toBe('invalid_argument');
    const metadata = await sendWebhook(delivery('https://169.254.169.254/'), { allowPrivate: true });
    expect(metadata.kind).toBe('failed');
    expect(hook.received).toHaveLength(0);
    expectNoLeak(outcome);
  });

  it('refuses an unusable secret or message id without printing them', async () => {
    const hook = await receiver(answer(200));
    const badSecret = 'whsec_dG9vLXNob3J0';
    const outcome = await sendWebhook(delivery(hook.url, { secret: badSecret }), local);
    expect(outcome.kind === 'failed' && outcome.error.message).toBe(
      'webhook target tgt_9xY has an unusable secret: webhook secret must decode to 24–64 bytes',
    );
    expect(JSON.stringify(outcome)).not.toContain('dG9vLXNob3J0');
    const badId = await sendWebhook(delivery(hook.url, { messageId: 'two words' }), local);
    expect(badId.kind === 'failed' && badId.error.code).toBe('invalid_argument');
    expect(hook.received).toHaveLength(0);
  });
});

describe('sendWebhook: connects only to the checked address', () => {
  it('resolves the host once and pins the connection to the vetted answer', async () => {
    const hook = await receiver(answer(204));
    const asked: string[] = [];
    const answers = [
      [{ address: '127.0.0.1', family: 4 as const }],
      [{ address: '169.254.169.254', family: 4 as const }],
    ];
    const rebinding: HostResolver = async (hostname) => {
      asked.push(hostname);
      return answers[asked.length - 1] ?? [];
    };
    const url = `http://hooks.calgate.test:${hook.port}/in`;
    const outcome = await sendWebhook(delivery(url), { ...local, resolve: rebinding });
    expect(outcome).toMatchObject({ kind: 'delivered', status: 204 });
    expect(asked).toEqual(['hooks.calgate.test']);
    expect(hook.received[0]?.headers.host).toBe(`hooks.calgate.test:${hook.port}`);
    const second = await sendWebhook(delivery(url), { ...local, resolve: rebinding });
    expect(second.kind === 'failed' && second.error.code).toBe('permission_denied');
    expect(hook.received).toHaveLength(1);
  });
});
