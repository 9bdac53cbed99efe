import http from 'node:http';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, startTestGateway, type TestGateway } from './harness.ts';

/**
 * A raw GET stream over node:http without connection reuse (fetch's pool keeps spare sockets
 * after an abort, which would hold up the gateway's shutdown in the test).
 */
async function openStream(mcpUrl: string, secret: string, headers: Record<string, string> = {}) {
  const request = http.get(mcpUrl, {
    agent: false,
    headers: { authorization: `Bearer ${secret}`, accept: 'text/event-stream', ...headers },
  });
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.once('error', reject);
  });
  response.setEncoding('utf8');
  let text = '';
  let ended = false;
  let wake = () => {};
  response.on('data', (chunk: string) => {
    text += chunk;
    wake();
  });
  response.once('close', () => {
    ended = true;
    wake();
  });
  return {
    status: response.statusCode,
    headers: response.headers,
    get text() {
      return text;
    },
    get ended() {
      return ended;
    },
    /** Waits until `done(text)` holds or the server ends the stream; false on timeout. */
    async until(done: (text: string) => boolean, timeoutMs = 8000): Promise<boolean> {
      const deadline = Date.now() + timeoutMs;
      while (!done(text) && !ended && Date.now() < deadline) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, Math.max(0, deadline - Date.now()));
        });
      }
      return done(text) || ended;
    },
    close() {
      request.destroy();
    },
  };
}

/** Waits for the SDK client to have received `count` tool-list notifications. */
async function waitFor(check: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) {
      throw new Error(`not within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Date.now() - started;
}

const LIST_CHANGED = '"method":"notifications/tools/list_changed"';

describe('GET /api/mcp: tool-list change notifications over a standalone event stream', () => {
  let a: TestGateway;
  let b: TestGateway;
  const clients: Client[] = [];

  beforeAll(async () => {
    const env = { MCP_STREAM_KEEPALIVE_MS: '200', MCP_STREAM_RECHECK_MS: '300', KEY_CACHE_TTL_MS: '500' };
    a = await startTestGateway(env);
    // A second gateway process on the same database: nothing shared but Postgres and Redis.
    b = await startTestGateway(env, { db: a.db });
  });
  afterAll(async () => {
    for (const client of clients) {
      await client.close();
    }
    await b.stop();
    await a.stop();
  });

  async function sdkClient(mcpUrl: string, secret: string) {
    const client = await connectClient(mcpUrl, secret);
    clients.push(client);
    const seen = { count: 0 };
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      seen.count++;
    });
    return { client, seen };
  }

  it('declares tools.listChanged and notifies the SDK client when a grant change alters its tools', async () => {
    const tenant = await a.seedTenant('Same process');
    const work = await a.localCalendar(tenant.tenantId, 'Work');
    const { client, seen } = await sdkClient(a.mcpUrl, tenant.secret);
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('create_event');
    // Let the client's GET stream open before the change.
    await new Promise((resolve) => setTimeout(resolve, 300));

    await a.grant(tenant.tenantId, tenant.keyId, work, { read: true, write: true });
    await waitFor(() => seen.count === 1, 3000);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('create_event');

    // A grant change that leaves the tool set as it is sends nothing.
    const other = await a.localCalendar(tenant.tenantId, 'Other');
    await a.grant(tenant.tenantId, tenant.keyId, other, { read: true, write: false });
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(seen.count).toBe(1);

    await a.grant(tenant.tenantId, tenant.keyId, work, { read: true, write: false });
    await waitFor(() => seen.count === 2, 3000);
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('create_event');
  });

  it('a change made on gateway A reaches a stream open on gateway B', async () => {
    const tenant = await a.seedTenant('Two processes');
    const work = await a.localCalendar(tenant.tenantId, 'Work');
    const { client, seen } = await sdkClient(b.mcpUrl, tenant.secret);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Only A's key cache is invalidated; B finds out by looking the key up again.
    await a.grant(tenant.tenantId, tenant.keyId, work, { read: true, write: false });
    const waited = await waitFor(() => seen.count === 1, 5000);
    expect(waited).toBeLessThan(3000);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('list_events');
  });

  it('sends keep-alive comments and closes the stream of a revoked key', async () => {
    const tenant = await a.seedTenant('Revoked');
    const stream = await openStream(b.mcpUrl, tenant.secret);
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream');
    expect(await stream.until((text) => text.includes(': keep-alive\n\n'))).toBe(true);
    expect(stream.ended).toBe(false);
    // Revoked behind both gateways' backs, like the dashboard of a third process would.
    await a.db.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [tenant.keyId]);
    const revokedAt = Date.now();
    expect(await stream.until(() => false, 5000)).toBe(true);
    expect(stream.ended).toBe(true);
    expect(Date.now() - revokedAt).toBeLessThan(3000);
    expect(stream.text).not.toContain(LIST_CHANGED);
  });

  it('limits open streams per key and refuses foreign origins, missing keys and plain GETs', async () => {
    const tenant = await a.seedTenant('Many streams');
    const open = [];
    for (let i = 0; i < 5; i++) {
      const stream = await openStream(a.mcpUrl, tenant.secret);
      expect(stream.status).toBe(200);
      open.push(stream);
    }
    const sixth = await openStream(a.mcpUrl, tenant.secret);
    expect(sixth.status).toBe(429);
    expect(await sixth.until((text) => text.includes('}}'))).toBe(true);
    expect(sixth.text).toMatch(/5 open event streams/);
    // Another gateway process counts its own streams.
    const elsewhere = await openStream(b.mcpUrl, tenant.secret);
    expect(elsewhere.status).toBe(200);
    elsewhere.close();
    open.pop()?.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const again = await openStream(a.mcpUrl, tenant.secret);
    expect(again.status).toBe(200);
    for (const stream of [...open, again]) {
      stream.close();
    }

    const plain = await openStream(a.mcpUrl, tenant.secret, { accept: 'application/json' });
    expect(plain.status).toBe(405);
    expect(plain.headers.allow).toBe('GET, POST');
    const foreign = await openStream(a.mcpUrl, tenant.secret, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    const anonymous = await openStream(a.mcpUrl, tenant.secret, { authorization: '' });
    expect(anonymous.status).toBe(401);
    for (const answer of [sixth, plain, foreign, anonymous]) {
      answer.close();
    }
  });
});
