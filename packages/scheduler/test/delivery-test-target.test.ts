import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type LettaEmulator, startLettaEmulator } from '@calgate/letta-emulator';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret, type TestableTarget, testDeliveryTarget } from '../src/index.ts';

const KEY = 'sk-let-target-test-5b1e';
const ANN = 'agent-0a8b6f1e-3c55-4d5e-9a4e-1d2c3b4a5f60';
const MISSING = 'agent-00000000-0000-4000-8000-00000000dead';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

let emulator: LettaEmulator;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  emulator = await startLettaEmulator({
    seed: { apiKeys: [KEY], agents: [{ id: ANN, name: 'ann-assistant' }] },
  });
});
afterEach(async () => {
  emulator.admin.reset();
  await Promise.all(closers.splice(0).map((close) => close()));
});
afterAll(async () => {
  await emulator.close();
});

/** A real webhook receiver on loopback that records requests and answers `status`. */
async function receiver(status: number): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks?token=q-secret`, received };
}

describe('testDeliveryTarget: webhook', () => {
  it('sends a signed target.test event that the official package verifies', async () => {
    const hook = await receiver(204);
    const secret = generateWebhookSecret();
    const target: TestableTarget = {
      id: 'tgt_W3b',
      kind: 'webhook',
      url: hook.url,
      secret,
      defaultAgentId: null,
    };
    const before = Date.now();
    const result = await testDeliveryTarget(target, { allowPrivate: true });
    expect(result).toMatchObject({ targetId: 'tgt_W3b', ok: true, status: 204, error: null });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(hook.received).toHaveLength(1);
    const [request] = hook.received;
    expect(request?.headers['webhook-id']).toMatch(/^test_[0-9a-f]{24}$/);
    const verified = new Webhook(secret).verify(
      request?.body ?? '',
      request?.headers as Record<string, string>,
    );
    expect(verified).toEqual({ type: 'target.test', targetId: 'tgt_W3b', sentAt: expect.any(String) });
    const sentAt = Date.parse((verified as { sentAt: string }).sentAt);
    expect(sentAt).toBeGreaterThanOrEqual(before);
    expect(sentAt).toBeLessThanOrEqual(Date.now());
  });

  it('reports a refusing receiver, without the URL or the secret', async () => {
    const hook = await receiver(500);
    const secret = generateWebhookSecret();
    const result = await testDeliveryTarget(
      { id: 'tgt_W3b', kind: 'webhook', url: hook.url, secret, defaultAgentId: null },
      { allowPrivate: true },
    );
    expect(result).toMatchObject({ ok: false, status: 500 });
    expect(result.error).toContain('tgt_W3b answered 500');
    expect(result.error).not.toMatch(/q-secret|hooks/);
    expect(result.error).not.toContain(secret.slice(6));
  });

  it('applies the SSRF policy', async () => {
    const hook = await receiver(200);
    const result = await testDeliveryTarget(
      {
        id: 'tgt_W3b',
        kind: 'webhook',
        url: hook.url,
        secret: generateWebhookSecret(),
        defaultAgentId: null,
      },
      { allowPrivate: false, requireHttps: false },
    );
    expect(result).toMatchObject({ ok: false, status: null });
    expect(result.error).toMatch(/loopback address/);
    expect(hook.received).toEqual([]);
  });
});

describe('testDeliveryTarget: Letta', () => {
  const letta = (extra: Partial<TestableTarget> = {}): TestableTarget => ({
    id: 'tgt_L3t',
    kind: 'letta',
    url: emulator.url,
    secret: KEY,
    defaultAgentId: null,
    ...extra,
  });

  it('is ok when the key is accepted, and sends no message', async () => {
    const result = await testDeliveryTarget(letta(), { allowPrivate: true });
    expect(result).toMatchObject({ targetId: 'tgt_L3t', ok: true, status: 200, error: null });
    expect(emulator.admin.requests().map((r) => [r.op, r.apiKey])).toEqual([['agents.list', KEY]]);
    expect(emulator.admin.messages()).toEqual([]);
    const withAgent = await testDeliveryTarget(letta({ defaultAgentId: ANN }), { allowPrivate: true });
    expect(withAgent.ok).toBe(true);
  });

  it('fails when the default agent is missing', async () => {
    const result = await testDeliveryTarget(letta({ defaultAgentId: MISSING }), { allowPrivate: true });
    expect(result).toMatchObject({ ok: false, status: 200 });
    expect(result.error).toBe(
      `Letta agent ${MISSING}, the target's default agent, was not found at target tgt_L3t (the key sees 1 agent)`,
    );
  });

  it('fails when the key is refused, without repeating it', async () => {
    const result = await testDeliveryTarget(letta({ secret: 'sk-let-refused-1234' }), { allowPrivate: true });
    expect(result).toMatchObject({ ok: false, status: 401 });
    expect(result.error).toContain("the target's API key was refused");
    expect(result.error).not.toContain('sk-let-refused-1234');
  });

  it('fails on an unreachable or hanging server', async () => {
    emulator.admin.fail({ op: 'agents.list' }, { kind: 'hang' });
    const result = await testDeliveryTarget(letta(), { allowPrivate: true, timeoutMs: 200 });
    expect(result).toMatchObject({ ok: false, status: null });
    expect(result.error).toBe('Letta target tgt_L3t did not answer within 200 ms');
  });
});
