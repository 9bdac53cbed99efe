import { catalogue } from '@calgate/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.ts';

describe('GET /api/docs, /healthz, /readyz', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw.stop();
  });

  it('serves every tool of the catalogue as JSON with schemas, annotations and a valid example', async () => {
    const response = await fetch(`${gw.url}/api/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    const docs = (await response.json()) as {
      endpoint: string;
      protocolVersion: string;
      tools: {
        name: string;
        title: string;
        description: string;
        inputSchema: { type: string };
        outputSchema: { type: string };
        annotations: Record<string, boolean | string>;
        example: { tool: string; arguments: unknown };
      }[];
    };
    expect(docs.endpoint).toBe('http://calgate.test/api/mcp');
    expect(docs.protocolVersion).toBe('2025-11-25');
    const names = catalogue().entries.map((entry) => entry.definition.name);
    expect(docs.tools.map((tool) => tool.name)).toEqual(names);
    expect(names).toEqual(expect.arrayContaining(['list_calendars', 'list_events']));
    for (const tool of docs.tools) {
      expect(tool.title).not.toBe('');
      expect(tool.description.length).toBeGreaterThan(20);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema.type).toBe('object');
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
        expect(typeof tool.annotations[hint]).toBe('boolean');
      }
      expect(tool.example.tool).toBe(tool.name);
      const entry = catalogue().get(tool.name);
      expect(entry?.definition.input.safeParse(tool.example.arguments).success).toBe(true);
    }
  });

  it('reports liveness and readiness of Postgres and Redis', async () => {
    expect(await (await fetch(`${gw.url}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
  });

  it('answers unknown routes with a JSON 404 and a request id', async () => {
    const response = await fetch(`${gw.url}/nope`);
    expect(response.status).toBe(404);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });
});

describe('/readyz without Redis', () => {
  it('is not ready while Redis is unreachable, and says which dependency failed', async () => {
    const gw = await startTestGateway({ REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      const response = await fetch(`${gw.url}/readyz`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as { checks: Record<string, string> };
      expect(body.checks.postgres).toBe('ok');
      expect(body.checks.redis).not.toBe('ok');
    } finally {
      await gw.stop();
    }
  });
});
