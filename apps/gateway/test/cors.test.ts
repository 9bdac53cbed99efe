import { request as httpRequest } from 'node:http';
import { freePort } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HIGH_RATE_LIMITS, rpc, startTestGateway, type TestGateway } from './harness.ts';

const LIST_TOOLS = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

function preflight(url: string, origin: string, method = 'POST'): Promise<Response> {
  return fetch(url, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
    },
  });
}

/** A POST with a Host header of our choosing, as a DNS-rebinding page's browser sends it. */
function postWithHost(url: string, host: string, headers: Record<string, string>) {
  const target = new URL(url);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = httpRequest(
      {
        hostname: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: {
          host,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify(LIST_TOOLS));
  });
}

/** The lists a browser-based MCP client needs, exactly (MCP streamable HTTP and OAuth). */
const ALLOW_METHODS = 'GET, POST, DELETE, OPTIONS';
const ALLOW_HEADERS =
  'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id, accept';
const EXPOSE_HEADERS = 'mcp-session-id, www-authenticate';

function expectCorsAnswer(response: Response, origin: string) {
  expect(response.headers.get('access-control-allow-origin')).toBe(origin);
  expect(response.headers.get('access-control-expose-headers')).toBe(EXPOSE_HEADERS);
  expect(response.headers.get('vary')).toMatch(/Origin/);
}

describe('CORS and Origin on a public PUBLIC_URL', () => {
  let gw: TestGateway;
  let secret: string;
  beforeAll(async () => {
    gw = await startTestGateway({
      ALLOWED_ORIGINS: 'https://app.example.com',
      RATE_LIMIT_PER_MINUTE: '1',
      RATE_LIMIT_BURST: '3',
    });
    secret = (await gw.seedTenant()).secret;
  });
  afterAll(async () => {
    await gw.stop();
  });

  it('answers a preflight from an allowed origin with 204 and the MCP methods and headers', async () => {
    for (const origin of ['https://app.example.com', 'http://calgate.test']) {
      const response = await preflight(gw.mcpUrl, origin);
      expect(response.status, origin).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe(origin);
      expect(response.headers.get('vary')).toMatch(/Origin/);
      expect(response.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE, OPTIONS');
      expect(response.headers.get('access-control-allow-headers')).toBe(
        'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id, accept',
      );
      expect(Number(response.headers.get('access-control-max-age'))).toBeGreaterThan(0);
    }
  });

  it('refuses a preflight from another origin with 403 and no CORS headers', async () => {
    for (const origin of ['https://evil.example', 'http://127.0.0.1:5173']) {
      const response = await preflight(gw.mcpUrl, origin);
      expect(response.status, origin).toBe(403);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      expect(response.headers.get('access-control-allow-methods')).toBeNull();
      expect(((await response.json()) as { error: { message: string } }).error.message).toBe(
        `Origin ${origin} is not allowed: this gateway accepts http://calgate.test (PUBLIC_URL) and https://app.example.com (ALLOWED_ORIGINS). Add it to ALLOWED_ORIGINS to let its pages call Calgate.`,
      );
    }
  });

  it('names an allowed origin and exposes the MCP headers on answers, errors included', async () => {
    const origin = 'https://app.example.com';
    const ok = await rpc(gw.mcpUrl, LIST_TOOLS, { origin, authorization: `Bearer ${secret}` });
    expect(ok.status).toBe(200);
    expectCorsAnswer(ok, origin);
    const unauthenticated = await rpc(gw.mcpUrl, LIST_TOOLS, { origin });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expectCorsAnswer(unauthenticated, origin);
    const stream = await fetch(gw.mcpUrl, {
      headers: { origin, authorization: `Bearer ${secret}`, accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(200);
    expectCorsAnswer(stream, origin);
    await stream.body?.cancel();
  });

  it('names the origin on a 429 too', async () => {
    const origin = 'https://app.example.com';
    const { secret: other } = await gw.seedTenant('Busy');
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await fetch(gw.mcpUrl, {
        method: 'DELETE',
        headers: { origin, authorization: `Bearer ${other}` },
      });
      statuses.push(response.status);
      expectCorsAnswer(response, origin);
      await response.body?.cancel();
    }
    expect(statuses).toEqual([405, 405, 405, 429]);
  });

  it('answers a foreign origin with 403 and without CORS headers', async () => {
    const response = await rpc(gw.mcpUrl, LIST_TOOLS, {
      origin: 'https://evil.example',
      authorization: `Bearer ${secret}`,
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS, Origin and Host on a loopback PUBLIC_URL', () => {
  let gw: TestGateway;
  let secret: string;
  let publicUrl: string;
  beforeAll(async () => {
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    gw = await startTestGateway({ PORT: String(port), PUBLIC_URL: publicUrl });
    secret = (await gw.seedTenant()).secret;
  });
  afterAll(async () => {
    await gw.stop();
  });

  it('accepts pages from any loopback host and port, http or https', async () => {
    for (const origin of [
      'http://127.0.0.1:5173',
      'https://localhost:3000',
      'http://[::1]:8080',
      publicUrl,
    ]) {
      const pre = await preflight(`${publicUrl}/api/mcp`, origin);
      expect(pre.status, origin).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe(origin);
      const response = await rpc(`${publicUrl}/api/mcp`, LIST_TOOLS, {
        origin,
        authorization: `Bearer ${secret}`,
      });
      expect(response.status, origin).toBe(200);
      expectCorsAnswer(response, origin);
    }
  });

  it('refuses other origins', async () => {
    const pre = await preflight(`${publicUrl}/api/mcp`, 'https://evil.example');
    expect(pre.status).toBe(403);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    const response = await rpc(`${publicUrl}/api/mcp`, LIST_TOOLS, {
      origin: 'https://evil.example',
      authorization: `Bearer ${secret}`,
    });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /evil\.example is not allowed: this gateway accepts pages from loopback addresses/,
    );
  });

  it('refuses a request whose Host is a foreign name resolving here (DNS rebinding)', async () => {
    const port = new URL(publicUrl).port;
    const rebound = await postWithHost(`${publicUrl}/api/mcp`, `evil.example:${port}`, {
      authorization: `Bearer ${secret}`,
    });
    expect(rebound.status).toBe(403);
    expect((JSON.parse(rebound.body) as { error: { message: string } }).error.message).toMatch(
      new RegExp(`Host evil\\.example:${port} is not this gateway`),
    );
    // Even when the page's own origin would look harmless.
    const withOrigin = await postWithHost(`${publicUrl}/api/mcp`, 'evil.example', {
      authorization: `Bearer ${secret}`,
      origin: 'http://127.0.0.1:5173',
    });
    expect(withOrigin.status).toBe(403);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      const local = await postWithHost(`${publicUrl}/api/mcp`, host, { authorization: `Bearer ${secret}` });
      expect(local.status, host).toBe(200);
    }
  });
});

describe('CORS on every endpoint a browser-based MCP client calls', () => {
  const ALLOWED = 'https://app.example.com';
  const FOREIGN = 'https://evil.example';
  /**
   * Each endpoint with the method a client calls it with, and its answer to that call without
   * credentials and with an empty JSON body: metadata for the GETs, refusals for the POSTs.
   */
  const ENDPOINTS: { path: string; method: 'GET' | 'POST'; status: number }[] = [
    { path: '/api/mcp', method: 'POST', status: 401 },
    { path: '/oauth/token', method: 'POST', status: 401 },
    { path: '/oauth/register', method: 'POST', status: 400 },
    { path: '/oauth/revoke', method: 'POST', status: 401 },
    { path: '/.well-known/oauth-protected-resource', method: 'GET', status: 200 },
    { path: '/.well-known/oauth-protected-resource/api/mcp', method: 'GET', status: 200 },
    { path: '/.well-known/oauth-authorization-server', method: 'GET', status: 200 },
    { path: '/.well-known/openid-configuration', method: 'GET', status: 200 },
  ];
  let gw: TestGateway;

  /** The request itself, from a page of `origin`; a POST carries a body the endpoint refuses. */
  function call(path: string, method: 'GET' | 'POST', origin: string): Promise<Response> {
    return fetch(`${gw.url}${path}`, {
      method,
      headers: {
        origin,
        ...(method === 'POST'
          ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
          : {}),
      },
      ...(method === 'POST' ? { body: '{}' } : {}),
    });
  }

  beforeAll(async () => {
    gw = await startTestGateway({ ALLOWED_ORIGINS: ALLOWED, ...HIGH_RATE_LIMITS });
  });
  afterAll(async () => {
    await gw.stop();
  });

  it('answers a preflight from an allowed origin with the exact methods and headers allowed', async () => {
    for (const { path, method } of ENDPOINTS) {
      const response = await fetch(`${gw.url}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: ALLOWED,
          'access-control-request-method': method,
          'access-control-request-headers':
            'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id',
        },
      });
      expect(response.status, path).toBe(204);
      expect(response.headers.get('access-control-allow-origin'), path).toBe(ALLOWED);
      expect(response.headers.get('access-control-allow-methods'), path).toBe(ALLOW_METHODS);
      expect(response.headers.get('access-control-allow-headers'), path).toBe(ALLOW_HEADERS);
      expect(Number(response.headers.get('access-control-max-age')), path).toBeGreaterThan(0);
      expect(response.headers.get('vary'), path).toMatch(/Origin/);
    }
  });

  it('names an allowed origin and exposes the MCP headers on each answer, errors included', async () => {
    for (const { path, method, status } of ENDPOINTS) {
      const response = await call(path, method, ALLOWED);
      expect(response.status, path).toBe(status);
      expect(response.headers.get('access-control-allow-origin'), path).toBe(ALLOWED);
      expect(response.headers.get('access-control-expose-headers'), path).toBe(EXPOSE_HEADERS);
      expect(response.headers.get('vary'), path).toMatch(/Origin/);
      await response.body?.cancel();
    }
  });

  it('gives a foreign origin no CORS allowance anywhere, on preflights or answers', async () => {
    for (const { path, method } of ENDPOINTS) {
      const pre = await preflight(`${gw.url}${path}`, FOREIGN, method);
      expect(pre.status, path).toBe(403);
      for (const name of [
        'access-control-allow-origin',
        'access-control-allow-methods',
        'access-control-allow-headers',
        'access-control-expose-headers',
      ]) {
        expect(pre.headers.get(name), `${path} ${name}`).toBeNull();
      }
      await pre.body?.cancel();
      const response = await call(path, method, FOREIGN);
      expect(response.headers.get('access-control-allow-origin'), path).toBeNull();
      expect(response.headers.get('access-control-expose-headers'), path).toBeNull();
      await response.body?.cancel();
    }
  });
});
