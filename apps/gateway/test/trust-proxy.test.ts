import { randomBytes } from 'node:crypto';
import { clientAddressOf } from '@calgate/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { parseTrustProxy } from '../src/http/trust-proxy.ts';
import { type Body, call, sessionFor } from './api-client.ts';
import { rpc, startTestGateway, type TestGateway } from './harness.ts';

/**
 * Sign-in attempts are limited per email and client address (five at once), so they show which
 * address the gateway saw: with a trusted proxy the X-Forwarded-For client, without one the
 * proxy's (here every request's) own.
 */
async function signInStatuses(
  gateway: TestGateway,
  email: string,
  forwardedFor: string,
  attempts: number,
): Promise<number[]> {
  const statuses: number[] = [];
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    const response = await fetch(`${gateway.url}/api/v1/auth/signin`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin: 'http://calgate.test',
        'x-forwarded-for': forwardedFor,
      },
      body: JSON.stringify({ email, password: 'not-the-password' }),
    });
    statuses.push(response.status);
    await response.body?.cancel();
  }
  return statuses;
}

/** What the audit shows of one tool call and one dashboard action: in the list, the detail and the CSV. */
interface AuditedAddresses {
  toolCall: string | null;
  action: string | null;
  /** GET /api/v1/audit/:id of the tool call and of the action. */
  details: (string | null)[];
  /** The CSV's last column, by tool or action name. */
  csv: Record<string, string>;
  csvHeader: string[];
}

/**
 * A tool call (tools/call over MCP with an API key) and a dashboard action (a key created from a
 * session), both sent with the given X-Forwarded-For, in a tenant of their own; then what the
 * audit API recorded as their client address.
 */
async function auditedAddresses(gateway: TestGateway, forwardedFor: string): Promise<AuditedAddresses> {
  const tenant = await gateway.seedTenant('Proxied');
  const person = await sessionFor(gateway, tenant.tenantId);
  const forwarded = { 'x-forwarded-for': forwardedFor };
  const answer = await rpc(
    gateway.mcpUrl,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_calendars', arguments: {} } },
    { authorization: `Bearer ${tenant.secret}`, ...forwarded },
  );
  expect(answer.status).toBe(200);
  await answer.body?.cancel();
  const created = await call(gateway, 'POST', '/api/v1/keys', {
    as: person,
    body: { name: 'laptop' },
    headers: forwarded,
  });
  expect(created.status).toBe(201);
  await gateway.runtime.deps.audit.flush();

  const list = await call(gateway, 'GET', '/api/v1/audit', { as: person });
  expect(list.status).toBe(200);
  const entries: Body[] = list.body.entries;
  const toolCall = entries.find((entry) => entry.tool === 'list_calendars');
  const action = entries.find((entry) => entry.tool === 'key.create');
  expect(toolCall).toMatchObject({ kind: 'tool', actor: { id: tenant.keyId } });
  expect(action).toMatchObject({ kind: 'dashboard', actor: { id: person.userId } });
  const details: (string | null)[] = [];
  for (const entry of [toolCall, action]) {
    const detail = await call(gateway, 'GET', `/api/v1/audit/${entry.id}`, { as: person });
    expect(detail.status).toBe(200);
    details.push(detail.body.entry.clientAddress);
  }

  const exported = await fetch(`${gateway.url}/api/v1/audit.csv`, { headers: { cookie: person.cookie } });
  expect(exported.status).toBe(200);
  // No cell here needs quoting: ids, names without commas, ISO instants and addresses.
  const [header = [], ...rows] = (await exported.text())
    .trimEnd()
    .split('\r\n')
    .map((line) => line.split(','));
  const name = header.indexOf('tool_or_action');
  const csv = Object.fromEntries(rows.map((row) => [row[name] ?? '', row.at(-1) ?? '']));
  return { toolCall: toolCall.clientAddress, action: action.clientAddress, details, csv, csvHeader: header };
}

/** The limiter lives in the run's shared Redis: an address no other test signs in with. */
function freshEmail(): string {
  return `owner-${randomBytes(6).toString('hex')}@example.com`;
}

describe('TRUST_PROXY=1 (one proxy in front)', () => {
  const email = freshEmail();
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ TRUST_PROXY: '1' });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('limits each forwarded client on its own', async () => {
    expect(await signInStatuses(gateway, email, '203.0.113.7', 6)).toEqual([401, 401, 401, 401, 401, 429]);
    // Another client behind the same proxy still gets its own five attempts.
    expect(await signInStatuses(gateway, email, '198.51.100.9', 1)).toEqual([401]);
    // Only the nearest hop is trusted: a client cannot pick its address by prepending one.
    expect(await signInStatuses(gateway, email, '198.51.100.10, 203.0.113.7', 1)).toEqual([429]);
  });
});

describe('without TRUST_PROXY', () => {
  const email = freshEmail();
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('ignores X-Forwarded-For: every request is the connecting address', async () => {
    expect(await signInStatuses(gateway, email, '203.0.113.7', 5)).toEqual([401, 401, 401, 401, 401]);
    expect(await signInStatuses(gateway, email, '198.51.100.9', 1)).toEqual([429]);
  });

  it('audits tool calls and dashboard actions with the connecting address, not the header', async () => {
    const seen = await auditedAddresses(gateway, '203.0.113.7');
    expect(seen.toolCall).toBe('127.0.0.1');
    expect(seen.action).toBe('127.0.0.1');
    expect(seen.details).toEqual(['127.0.0.1', '127.0.0.1']);
    expect(seen.csv).toMatchObject({ list_calendars: '127.0.0.1', 'key.create': '127.0.0.1' });
  });
});

describe('TRUST_PROXY=127.0.0.1 (the proxy on loopback)', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ TRUST_PROXY: '127.0.0.1' });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it("audits tool calls and dashboard actions with the forwarded client's address", async () => {
    const seen = await auditedAddresses(gateway, '203.0.113.7');
    expect(seen.toolCall).toBe('203.0.113.7');
    expect(seen.action).toBe('203.0.113.7');
    // The row's detail and the CSV export show it too, the CSV in its last column.
    expect(seen.details).toEqual(['203.0.113.7', '203.0.113.7']);
    expect(seen.csvHeader.at(-1)).toBe('client_address');
    expect(seen.csv).toMatchObject({ list_calendars: '203.0.113.7', 'key.create': '203.0.113.7' });
  });

  it('takes the address the trusted proxy saw, not one the client prepended', async () => {
    const seen = await auditedAddresses(gateway, '198.51.100.10, 203.0.113.7');
    expect([seen.toolCall, seen.action]).toEqual(['203.0.113.7', '203.0.113.7']);
  });

  it('records the proxy itself when it forwards no client', async () => {
    const tenant = await gateway.seedTenant('Direct');
    const person = await sessionFor(gateway, tenant.tenantId);
    const created = await call(gateway, 'POST', '/api/v1/keys', { as: person, body: { name: 'direct' } });
    expect(created.status).toBe(201);
    await gateway.runtime.deps.audit.flush();
    const { body } = await call(gateway, 'GET', '/api/v1/audit?tool=key.create', { as: person });
    expect(body.entries.map((entry: Body) => entry.clientAddress)).toEqual(['127.0.0.1']);
  });
});

describe('TRUST_PROXY naming another proxy (the request comes from an untrusted hop)', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ TRUST_PROXY: '10.0.0.1' });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('ignores X-Forwarded-For from a peer it does not trust and audits the peer', async () => {
    const seen = await auditedAddresses(gateway, '203.0.113.7');
    expect([seen.toolCall, seen.action, ...seen.details]).toEqual([
      '127.0.0.1',
      '127.0.0.1',
      '127.0.0.1',
      '127.0.0.1',
    ]);
    expect(seen.csv).toMatchObject({ list_calendars: '127.0.0.1', 'key.create': '127.0.0.1' });
  });
});

describe('clientAddressOf', () => {
  it('keeps IP addresses, writes IPv4-mapped IPv6 as IPv4, and drops anything else', () => {
    expect(clientAddressOf('203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddressOf('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddressOf('2001:db8::7')).toBe('2001:db8::7');
    expect(clientAddressOf('::1')).toBe('::1');
    expect(clientAddressOf('proxy.internal')).toBeNull();
    expect(clientAddressOf('203.0.113.7, 10.0.0.1')).toBeNull();
    expect(clientAddressOf(undefined)).toBeNull();
  });
});

describe('parseTrustProxy', () => {
  it('reads true/false, hop counts, and addresses or ranges', () => {
    expect(parseTrustProxy('true')).toEqual({ ok: true, value: true });
    expect(parseTrustProxy('false')).toEqual({ ok: true, value: false });
    expect(parseTrustProxy('2')).toEqual({ ok: true, value: 2 });
    expect(parseTrustProxy(' 10.0.0.0/8, 192.168.1.5 ,::1, fd00::/8,loopback')).toEqual({
      ok: true,
      value: ['10.0.0.0/8', '192.168.1.5', '::1', 'fd00::/8', 'loopback'],
    });
  });

  it('refuses anything else at start, naming the entry', () => {
    expect(parseTrustProxy('10.0.0.0/33')).toMatchObject({ ok: false });
    expect(parseTrustProxy('proxy.internal')).toMatchObject({ ok: false });
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.1,caddy' })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.1,caddy' })).toThrow(
      "TRUST_PROXY: 'caddy' is not true, a number of proxy hops, or an IP address or CIDR range",
    );
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
  });
});
