import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { HostResolver } from '@calgate/scheduler';
import { createTestDatabase, freePort, redisUrl, type TestDatabase } from '@calgate/testkit';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { type RunningGateway, serve } from '../src/serve.ts';

/** Rate limits no test that makes many calls reaches. */
export const HIGH_RATE_LIMITS = { RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_BURST: '10000' };

export interface TestGateway extends RunningGateway {
  db: TestDatabase;
  mcpUrl: string;
  /** Every log line the gateway wrote. */
  logs: string[];
  /** A tenant with an API key; returns the secret and ids. */
  seedTenant(name?: string): Promise<{ tenantId: string; keyId: string; secret: string }>;
  localCalendar(tenantId: string, summary: string, timeZone?: string): Promise<string>;
  grant(
    tenantId: string,
    keyId: string,
    calendarId: string,
    grant: { read: boolean; write: boolean },
  ): Promise<void>;
  /**
   * Drops this gateway's cached key lookups of one tenant and tells the other gateways (through
   * Redis) to drop theirs, as the dashboard does after a change. Never all tenants': gateways of
   * other test files hear it too, and an emptied cache fails their calls while Postgres is away.
   */
  forgetKeys(tenantId: string): void;
  stop(): Promise<void>;
}

/**
 * A real gateway on a free loopback port, wired by the same runtime as production, with its own
 * Postgres database and the run's Redis.
 */
export async function startTestGateway(
  env: Record<string, string> = {},
  options: {
    /** Serve this database (another gateway's) instead of a new one; it is left open on stop. */
    db?: TestDatabase;
    /** No REDIS_URL: rate limits and booking locks stay inside this gateway. */
    withoutRedis?: boolean;
    /** How CalDAV servers' host names are resolved when accounts are connected. */
    resolveHost?: HostResolver;
  } = {},
): Promise<TestGateway> {
  const db = options.db ?? (await createTestDatabase());
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    PUBLIC_URL: 'http://calgate.test',
    DATABASE_URL: db.url,
    ...(options.withoutRedis ? {} : { REDIS_URL: redisUrl() }),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'info',
    // A database made here is a clone of the run's migrated template: nothing to migrate.
    ...(options.db === undefined ? { MIGRATE_ON_START: 'false' } : {}),
    ...env,
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const gateway = await serve(
    config,
    createLogger(config.logLevel, sink),
    options.resolveHost === undefined ? {} : { resolveHost: options.resolveHost },
  );
  const { tenancy, keys } = gateway.runtime;
  const forgetKeys = (tenantId: string) => gateway.runtime.deps.authenticator.invalidate('here', tenantId);
  return {
    ...gateway,
    db,
    logs,
    mcpUrl: `${gateway.url}/api/mcp`,
    async seedTenant(name = 'Tenant') {
      const tenant = await tenancy.createTenant(name);
      const { key, secret } = await keys.create(tenant.id, { name: 'agent' });
      return { tenantId: tenant.id, keyId: key.id, secret };
    },
    async localCalendar(tenantId, summary, timeZone = 'Europe/Berlin') {
      return (await tenancy.createLocalCalendar(tenantId, { summary, timeZone })).id;
    },
    async grant(tenantId, keyId, calendarId, grant) {
      await tenancy.setGrant(tenantId, keyId, calendarId, grant);
      forgetKeys(tenantId);
    },
    forgetKeys,
    async stop() {
      await gateway.close();
      if (options.db === undefined) {
        await db.close();
      }
    },
  };
}

/** The official MCP SDK client (v2, MCP 2025-11-25 by initialize) over streamable HTTP with a bearer key. */
export async function connectClient(mcpUrl: string, secret: string): Promise<Client> {
  const client = new Client({ name: 'calgate-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${secret}` } },
  });
  await client.connect(transport);
  return client;
}

/** The last v1 SDK client (`@modelcontextprotocol/sdk`), as agents built on it still connect. */
export async function connectClientV1(mcpUrl: string, secret: string): Promise<ClientV1> {
  const client = new ClientV1({ name: 'calgate-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransportV1(new URL(mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${secret}` } },
    }),
  );
  return client;
}

/**
 * The v2 SDK client over streamable HTTP with a bearer key, speaking MCP 2026-07-28 (`pin`) or
 * choosing by `server/discover` (`auto`).
 */
export async function connectClient2026(
  mcpUrl: string,
  secret: string,
  mode: 'auto' | 'pin' = 'pin',
): Promise<Client> {
  const client = new Client(
    { name: 'calgate-test', version: '1.0.0' },
    { versionNegotiation: { mode: mode === 'auto' ? 'auto' : { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${secret}` } },
    }),
  );
  return client;
}

/** A raw JSON-RPC POST, for checks below what the SDK client lets us send. */
export function rpc(mcpUrl: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(mcpUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function textOf(result: object): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content;
  return content?.map((item) => item.text ?? '').join('') ?? '';
}

export interface GatewayProcess {
  url: string;
  mcpUrl: string;
  /** The operating-system process (to kill it without a shutdown). */
  child: import('node:child_process').ChildProcess;
  stop(): Promise<void>;
}

/**
 * `calgate serve` as its own operating-system process (another gateway behind the same load
 * balancer): nothing is shared with the test process but Postgres and Redis.
 */
export async function spawnGatewayProcess(env: Record<string, string>): Promise<GatewayProcess> {
  const { spawn } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  // A given PORT lets the caller name the gateway's PUBLIC_URL before it starts.
  const port = env.PORT === undefined ? await freePort() : Number(env.PORT);
  const bin = fileURLToPath(new URL('../src/bin/calgate.ts', import.meta.url));
  const child = spawn(process.execPath, [bin, 'serve'], {
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: 'http://calgate.test',
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      MIGRATE_ON_START: 'false',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += String(chunk)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`gateway process exited: ${stderr}`);
    }
    try {
      if ((await fetch(`${url}/readyz`)).ok) {
        break;
      }
    } catch {}
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`gateway process did not become ready: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    mcpUrl: `${url}/api/mcp`,
    child,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
