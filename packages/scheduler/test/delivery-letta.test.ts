import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type LettaEmulator, startLettaEmulator } from '@calgate/letta-emulator';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  backoff,
  type HostResolver,
  LETTA_AGENT_LIST_CAP,
  type LettaDelivery,
  type LettaSenderOptions,
  lettaBaseUrl,
  listLettaAgents,
  sendLettaMessage,
  type WebhookOutcome,
} from '../src/index.ts';

const KEY = 'sk-let-scheduler-test-7f3a9c';
const ANN = 'agent-0a8b6f1e-3c55-4d5e-9a4e-1d2c3b4a5f60';
const BOB = 'agent-1b9c7a2f-4d66-4e6f-8b5f-2e3d4c5b6a71';
const MISSING = 'agent-00000000-0000-4000-8000-00000000dead';
const TARGET = 'tgt_L3tta';
const PROMPT = 'Review today’s calendar and tell me what to prepare.';

let emulator: LettaEmulator;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  emulator = await startLettaEmulator({
    seed: {
      apiKeys: [KEY],
      agents: [
        { id: ANN, name: 'ann-assistant', created_at: '2026-01-05T09:00:00Z' },
        { id: BOB, name: 'bob-assistant', created_at: '2026-01-06T09:00:00Z' },
      ],
    },
  });
});
afterEach(async () => {
  emulator.admin.reset();
  await Promise.all(closers.splice(0).map((close) => close()));
});
afterAll(async () => {
  await emulator.close();
});

const local: LettaSenderOptions = { allowPrivate: true, backoff: { baseMs: 1000, random: () => 0 } };

function delivery(extra: Partial<LettaDelivery> = {}): LettaDelivery {
  return { targetId: TARGET, baseUrl: emulator.url, apiKey: KEY, agentId: ANN, prompt: PROMPT, ...extra };
}

/** Errors name the target, never the key. */
function expectNoLeak(outcome: WebhookOutcome) {
  if (outcome.kind === 'delivered') {
    return;
  }
  const text = `${outcome.error.message} ${JSON.stringify(outcome.error.context)} ${String(outcome.error.stack)}`;
  expect(text).not.toContain(KEY);
  expect(text).not.toContain(KEY.slice(8));
  expect(outcome.error.message).toContain(TARGET);
}

/** A plain HTTP server on loopback that answers every request with `handler`. */
async function server(handler: RequestListener): Promise<string> {
  const http = createServer(handler);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
}

describe('sendLettaMessage: delivered', () => {
  it('POSTs one user message through the official client, with the bearer key', async () => {
    const outcome = await sendLettaMessage(delivery(), local);
    expect(outcome).toMatchObject({ kind: 'delivered', status: 200 });
    const received = emulator.admin.messages(ANN);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({
      agentId: ANN,
      role: 'user',
      text: PROMPT,
      content: [{ type: 'text', text: PROMPT }],
    });
    expect(emulator.admin.messages(BOB)).toEqual([]);
    const [request] = emulator.admin.requests({ op: 'messages.create' });
    expect(request).toMatchObject({
      method: 'POST',
      path: `/v1/agents/${ANN}/messages`,
      apiKey: KEY,
      status: 200,
      retryCount: 0,
    });
    expect(request?.body).toEqual({
      messages: [{ role: 'user', content: [{ type: 'text', text: PROMPT }] }],
    });
  });

  it('sends the message id as the message’s otid, the same on every attempt', async () => {
    const first = await sendLettaMessage(delivery({ messageId: 'sch_7Fq2.1772355600' }), local);
    const second = await sendLettaMessage(delivery({ messageId: 'sch_7Fq2.1772355600' }), {
      ...local,
      attempt: 2,
    });
    expect([first.kind, second.kind]).toEqual(['delivered', 'delivered']);
    expect(emulator.admin.messages(ANN).map((m) => m.otid)).toEqual([
      'sch_7Fq2.1772355600',
      'sch_7Fq2.1772355600',
    ]);
  });

  it('accepts a base URL given with a trailing slash or /v1', async () => {
    for (const baseUrl of [`${emulator.url}/`, `${emulator.url}/v1`, `${emulator.url}/v1/`]) {
      expect((await sendLettaMessage(delivery({ baseUrl }), local)).kind).toBe('delivered');
    }
    expect(emulator.admin.requests({ op: 'messages.create' }).map((r) => r.path)).toEqual(
      Array(3).fill(`/v1/agents/${ANN}/messages`),
    );
    expect(lettaBaseUrl(new URL('https://letta.example/proxy/v1/?x=1'))).toBe('https://letta.example/proxy');
  });

  it('connects to the address the SSRF check resolved, not to a second lookup', async () => {
    const port = new URL(emulator.url).port;
    const resolved: string[] = [];
    const resolve: HostResolver = async (host) => {
      resolved.push(host);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    // `letta.calgate.invalid` exists in no DNS: only the pinned address can reach the emulator.
    const outcome = await sendLettaMessage(delivery({ baseUrl: `http://letta.calgate.invalid:${port}` }), {
      ...local,
      resolve,
    });
    expect(outcome.kind).toBe('delivered');
    expect(resolved).toEqual(['letta.calgate.invalid']);
    expect(emulator.admin.messages(ANN)).toHaveLength(1);
  });
});

describe('sendLettaMessage: final failures', () => {
  it('names the agent and the target when the agent does not exist', async () => {
    const outcome = await sendLettaMessage(delivery({ agentId: MISSING }), local);
    expect(outcome).toMatchObject({ kind: 'failed', status: 404 });
    if (outcome.kind !== 'failed') {
      return;
    }
    expect(outcome.error.code).toBe('not_found');
    expect(outcome.error.message).toBe(`Letta agent ${MISSING} was not found at target ${TARGET}`);
    expect(outcome.error.retry).toBe(false);
    expectNoLeak(outcome);
  });

  it('says the key was refused, without repeating it', async () => {
    const wrong = 'sk-let-wrong-key-0123456789';
    const outcome = await sendLettaMessage(delivery({ apiKey: wrong }), local);
    expect(outcome).toMatchObject({ kind: 'failed', status: 401 });
    if (outcome.kind !== 'failed') {
      return;
    }
    expect(outcome.error.code).toBe('permission_denied');
    expect(outcome.error.message).toContain("the target's API key was refused");
    expect(outcome.error.message).not.toContain(wrong);
    expect(emulator.admin.requests().at(-1)).toMatchObject({ status: 401, apiKey: wrong });
    expect(emulator.admin.messages()).toEqual([]);

    emulator.admin.fail({ op: 'messages.create' }, { kind: 'error', status: 403 });
    const forbidden = await sendLettaMessage(delivery(), local);
    expect(forbidden).toMatchObject({ kind: 'failed', status: 403 });
    expectNoLeak(forbidden);
  });

  it('disables the target on 410 Gone', async () => {
    emulator.admin.fail({ op: 'messages.create' }, { kind: 'error', status: 410 });
    const outcome = await sendLettaMessage(delivery(), local);
    expect(outcome).toMatchObject({ kind: 'disable', status: 410 });
    expectNoLeak(outcome);
  });

  it('fails other 4xx with Letta’s detail, redacting the key if a server echoes it', async () => {
    emulator.admin.fail(
      { op: 'messages.create' },
      { kind: 'error', status: 400, detail: `Bad request for key ${KEY}` },
    );
    const outcome = await sendLettaMessage(delivery(), local);
    expect(outcome).toMatchObject({ kind: 'failed', status: 400 });
    if (outcome.kind !== 'failed') {
      return;
    }
    expect(outcome.error.code).toBe('invalid_argument');
    expect(outcome.error.message).toBe(`Letta target ${TARGET} answered 400: Bad request for key [redacted]`);
    expectNoLeak(outcome);
  });

  it('points at the base URL when a 404 does not come from Letta', async () => {
    const url = await server((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>Not Found</h1>');
    });
    const outcome = await sendLettaMessage(delivery({ baseUrl: `${url}/wrong/place?token=hide-me` }), local);
    expect(outcome).toMatchObject({ kind: 'failed', status: 404 });
    if (outcome.kind !== 'failed') {
      return;
    }
    expect(outcome.error.message).toMatch(/check that the target's URL is the Letta server's base URL/);
    expect(outcome.error.message).not.toMatch(/wrong|hide-me/);
    expectNoLeak(outcome);
  });

  it('does not follow a redirect', async () => {
    let hits = 0;
    const url = await server((_req, res) => {
      hits += 1;
      res.writeHead(302, { location: emulator.url });
      res.end();
    });
    const outcome = await sendLettaMessage(delivery({ baseUrl: url }), local);
    expect(outcome).toMatchObject({ kind: 'failed', status: 302 });
    expect(hits).toBe(1);
    expect(emulator.admin.requests()).toEqual([]);
  });

  it('refuses an unusable agent id or an empty key without calling Letta', async () => {
    for (const bad of [
      delivery({ agentId: '' }),
      delivery({ agentId: '..' }),
      delivery({ agentId: `${ANN} ` }),
      delivery({ apiKey: ' ' }),
    ]) {
      const outcome = await sendLettaMessage(bad, local);
      expect(outcome).toMatchObject({ kind: 'failed', status: null });
    }
    expect(emulator.admin.requests()).toEqual([]);
  });
});

describe('sendLettaMessage: retries', () => {
  it('honours Retry-After on 429, capped by maxRetryAfterMs', async () => {
    emulator.admin.fail({ op: 'messages.create' }, { kind: 'error', status: 429, retryAfterSeconds: 7 });
    const outcome = await sendLettaMessage(delivery(), local);
    expect(outcome).toMatchObject({ kind: 'retry', status: 429, retryInMs: 7000, retryAfterHeader: true });
    if (outcome.kind !== 'retry') {
      return;
    }
    expect(outcome.error).toMatchObject({ code: 'upstream_unavailable', retry: true, retryAfterMs: 7000 });
    expectNoLeak(outcome);
    // The client's own retries are off: one request, and nothing delivered.
    expect(emulator.admin.requests({ op: 'messages.create' })).toHaveLength(1);
    expect(emulator.admin.messages()).toEqual([]);

    emulator.admin.fail({ op: 'messages.create' }, { kind: 'error', status: 429, retryAfterSeconds: 7200 });
    const capped = await sendLettaMessage(delivery(), { ...local, maxRetryAfterMs: 60_000 });
    expect(capped).toMatchObject({ kind: 'retry', retryInMs: 60_000, retryAfterHeader: true });
  });

  it('backs off by attempt on 5xx, 408 and 409', async () => {
    for (const [status, attempt] of [
      [503, 3],
      [500, 1],
      [408, 2],
      [409, 4],
    ] as const) {
      emulator.admin.fail({ op: 'messages.create' }, { kind: 'error', status });
      const outcome = await sendLettaMessage(delivery(), { ...local, attempt });
      expect(outcome).toMatchObject({
        kind: 'retry',
        status,
        retryAfterHeader: false,
        retryInMs: backoff(attempt, { baseMs: 1000, random: () => 0 }),
      });
      expectNoLeak(outcome);
    }
    expect(emulator.admin.requests({ op: 'messages.create' })).toHaveLength(4);
    expect(emulator.admin.messages()).toEqual([]);
  });

  it('times out a hanging server and retries', async () => {
    emulator.admin.fail({ op: 'messages.create' }, { kind: 'hang' });
    const started = performance.now();
    const outcome = await sendLettaMessage(delivery(), { ...local, timeoutMs: 300 });
    expect(performance.now() - started).toBeLessThan(3000);
    expect(outcome).toMatchObject({ kind: 'retry', status: null, retryInMs: 500 });
    if (outcome.kind !== 'retry') {
      return;
    }
    expect(outcome.error.message).toBe(`Letta target ${TARGET} did not answer within 300 ms`);
    expect(outcome.error.context).toMatchObject({ networkCode: 'TIMEOUT', targetId: TARGET, agentId: ANN });
    expect(emulator.admin.messages()).toEqual([]);
    expectNoLeak(outcome);
  });

  it('retries a dropped connection and a refused one', async () => {
    emulator.admin.fail({ op: 'messages.create' }, { kind: 'dropRequest' });
    const dropped = await sendLettaMessage(delivery(), local);
    expect(dropped).toMatchObject({ kind: 'retry', status: null });
    expectNoLeak(dropped);

    const gone = await server(() => {});
    await Promise.all(closers.splice(0).map((close) => close()));
    const refused = await sendLettaMessage(delivery({ baseUrl: gone }), local);
    expect(refused).toMatchObject({ kind: 'retry', status: null });
    if (refused.kind === 'retry') {
      expect(refused.error.context.networkCode).toBe('ECONNREFUSED');
      expect(refused.error.message).toBe(`Letta target ${TARGET} could not be reached (ECONNREFUSED)`);
    }
  });

  it('ends as retryable when the caller aborts', async () => {
    emulator.admin.fail({ op: 'messages.create' }, { kind: 'hang' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const outcome = await sendLettaMessage(delivery(), { ...local, signal: controller.signal });
    expect(outcome).toMatchObject({ kind: 'retry', status: null });
    if (outcome.kind === 'retry') {
      expect(outcome.error.context.networkCode).toBe('ABORTED');
    }
  });
});

describe('sendLettaMessage: SSRF policy', () => {
  it('refuses a loopback base URL unless private targets are allowed', async () => {
    // Blocked, not failed: a worker with OUTBOUND_ALLOW_PRIVATE on would deliver it.
    const outcome = await sendLettaMessage(delivery(), { allowPrivate: false });
    expect(outcome).toMatchObject({ kind: 'blocked', status: null });
    if (outcome.kind !== 'blocked') {
      return;
    }
    expect(outcome.error.code).toBe('permission_denied');
    expect(outcome.error.message).toMatch(
      /loopback address; Calgate refuses private targets unless TARGETS_ALLOW_PRIVATE=true \(or OUTBOUND_ALLOW_PRIVATE=true\)/,
    );
    expectNoLeak(outcome);
    const https = await sendLettaMessage(delivery(), { allowPrivate: false, requireHttps: false });
    expect(https).toMatchObject({ kind: 'blocked', status: null });
    expect(emulator.admin.requests()).toEqual([]);
  });

  it('refuses a host name that resolves to a private address', async () => {
    const resolve: HostResolver = async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ];
    const outcome = await sendLettaMessage(delivery({ baseUrl: 'https://letta.calgate.invalid' }), {
      allowPrivate: false,
      resolve,
    });
    expect(outcome).toMatchObject({ kind: 'blocked', status: null });
    if (outcome.kind === 'blocked') {
      expect(outcome.error.message).toMatch(/resolves to 10\.0\.0\.7/);
    }
  });
});

describe('listLettaAgents', () => {
  const target = () => ({ targetId: TARGET, baseUrl: emulator.url, apiKey: KEY });

  it('lists the agents the key sees, page by page', async () => {
    emulator.admin.seed({
      agents: Array.from({ length: 148 }, (_, i) => ({ name: `bulk-${String(i).padStart(3, '0')}` })),
    });
    const listed = await listLettaAgents(target(), { allowPrivate: true });
    expect(listed.ok).toBe(true);
    if (!listed.ok) {
      return;
    }
    expect(listed.value).toHaveLength(150);
    expect(new Set(listed.value.map((a) => a.id)).size).toBe(150);
    expect(listed.value).toContainEqual({ id: ANN, name: 'ann-assistant' });
    const pages = emulator.admin.requests({ op: 'agents.list' });
    expect(pages).toHaveLength(2);
    expect(pages.every((r) => r.apiKey === KEY && r.query.limit === '100')).toBe(true);
  });

  it(`stops at ${LETTA_AGENT_LIST_CAP} agents`, async () => {
    emulator.admin.seed({ agents: Array.from({ length: 1_010 }, (_, i) => ({ name: `many-${i}` })) });
    const listed = await listLettaAgents(target(), { allowPrivate: true });
    expect(listed.ok && listed.value.length).toBe(LETTA_AGENT_LIST_CAP);
    expect(emulator.admin.requests({ op: 'agents.list' })).toHaveLength(10);
  });

  it('returns errors: refused key, unavailable server, SSRF refusal', async () => {
    const refused = await listLettaAgents(
      { ...target(), apiKey: 'sk-let-nope-nope' },
      { allowPrivate: true },
    );
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.error).toMatchObject({ code: 'permission_denied', context: { status: 401 } });
      expect(refused.error.message).toContain("the target's API key was refused");
      expect(refused.error.message).not.toContain('sk-let-nope-nope');
    }

    emulator.admin.fail({ op: 'agents.list' }, { kind: 'error', status: 502 });
    const down = await listLettaAgents(target(), { allowPrivate: true });
    expect(down.ok).toBe(false);
    if (!down.ok) {
      expect(down.error).toMatchObject({
        code: 'upstream_unavailable',
        retry: true,
        context: { status: 502 },
      });
    }

    const ssrf = await listLettaAgents(target(), { allowPrivate: false, requireHttps: false });
    expect(ssrf.ok).toBe(false);
    if (!ssrf.ok) {
      expect(ssrf.error.code).toBe('permission_denied');
      expect(ssrf.error.message).toContain(TARGET);
    }
    expect(emulator.admin.requests({ op: 'agents.list' })).toHaveLength(2);
  });
});
