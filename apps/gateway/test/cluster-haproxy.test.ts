import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiKeyRepository, loadMigrations, migrate, TenancyRepository } from '@calgate/store';
import { createTestDatabase, freePort, redisUrl, type TestDatabase, until } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { block } from './docs-blocks.ts';
import {
  connectClient,
  type GatewayProcess,
  HIGH_RATE_LIMITS,
  spawnGatewayProcess,
  textOf,
} from './harness.ts';
import { startWorker } from './workers.ts';

/**
 * Two `calgate serve` processes behind a real HAProxy (Debian's `haproxy`, configured as
 * docs/operations/scaling.md shows) and two `calgate worker` processes, on one Postgres and one
 * Redis, under a steady load of create_event calls from MCP SDK clients.
 */

const LOOPS = 4;
const HOUR = 3_600_000;

/**
 * The configuration docs/operations/scaling.md shows, with this test's addresses in its `bind`
 * and `server` lines and an admin socket for the restarts.
 */
async function haproxyConfig(socket: string, port: number, gateways: number[]): Promise<string> {
  const documented = `${block('haproxy-config')}\n`;
  // The backend is the block's last section: its servers become this test's gateways.
  const config = documented
    .replace(/^ {2}bind .*$/m, `  bind 127.0.0.1:${port}`)
    .replace(/^ {2}server .*\n/gm, '')
    .concat(gateways.map((p, i) => `  server g${i + 1} 127.0.0.1:${p}\n`).join(''));
  return `global\n  stats socket ${socket} mode 600 level admin\n  maxconn 2000\n\n${config}`;
}

/** One command on HAProxy's admin socket, its answer as text. */
function admin(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const connection = createConnection({ path: socket }, () => connection.end(`${command}\n`));
    connection.on('data', (chunk) => (out += String(chunk)));
    connection.on('end', () => resolve(out));
    connection.on('error', reject);
  });
}

/** HAProxy's view of a server: UP, DOWN, MAINT… */
async function serverStatus(socket: string, server: string): Promise<string> {
  const rows = (await admin(socket, 'show stat')).split('\n').map((line) => line.split(','));
  const header = (rows[0] ?? []).map((field) => field.replace(/^# /, ''));
  const row = rows.find((fields) => fields[0] === 'gateways' && fields[1] === server) ?? [];
  return row[header.indexOf('status')] ?? 'unknown';
}

interface LoadReport {
  /** Summaries of the events whose create_event the client saw succeed. */
  done: string[];
  /** Documented retryable answers: rate limits, "unavailable", HTTP 503 with Retry-After. */
  retryable: string[];
  /** Tool errors that are not retryable. */
  toolErrors: string[];
  /** Requests that got no answer (the connection broke, 502). */
  transport: string[];
}

/** `LOOPS` clients creating events one after another until `stop` is set. */
function startLoad(clients: Client[], calendarId: string, phase: string) {
  const report: LoadReport = { done: [], retryable: [], toolErrors: [], transport: [] };
  let stopped = false;
  const base = Date.parse('2027-03-01T00:00:00Z');
  const loops = clients.map(async (client, loop) => {
    for (let i = 0; !stopped; i++) {
      const summary = `${phase}-${loop}-${i}`;
      const start = base + (loop * 10_000 + i) * HOUR;
      try {
        const result = await client.callTool({
          name: 'create_event',
          arguments: {
            calendarId,
            summary,
            start: { dateTime: new Date(start).toISOString() },
            end: { dateTime: new Date(start + HOUR / 2).toISOString() },
            requestId: summary,
            allowDuplicates: true,
          },
        });
        if (result.isError !== true) {
          report.done.push(summary);
        } else if (/retry|try again/i.test(textOf(result))) {
          report.retryable.push(textOf(result));
        } else {
          report.toolErrors.push(textOf(result));
        }
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        (/\b503\b/.test(message) ? report.retryable : report.transport).push(`client ${loop}: ${message}`);
      }
    }
  });
  return {
    report,
    async stop(): Promise<LoadReport> {
      stopped = true;
      await Promise.all(loops);
      return report;
    },
  };
}

describe('two gateways behind HAProxy and two workers on one Postgres and Redis', () => {
  let db: TestDatabase;
  let dir: string;
  let socket: string;
  let lbPort: number;
  let haproxy: ChildProcess;
  const ports: number[] = [];
  const gateways: GatewayProcess[] = [];
  const workers = new Set<ChildProcess>();
  let env: Record<string, string>;
  let clients: Client[] = [];
  let calendarId: string;
  const loads: ReturnType<typeof startLoad>[] = [];

  const startGateway = async (index: number) => {
    gateways[index] = await spawnGatewayProcess({ ...env, PORT: String(ports[index]) });
    await until(async () => (await serverStatus(socket, `g${index + 1}`)).startsWith('UP'), 10_000);
  };

  /** Every event the clients saw created is in the database. */
  const missing = async (summaries: string[]) => {
    const { rows } = await db.pool.query<{ summary: string }>(
      'SELECT summary FROM local_events WHERE calendar_id = $1 AND summary = ANY($2)',
      [calendarId, summaries],
    );
    const stored = new Set(rows.map((row) => row.summary));
    return summaries.filter((summary) => !stored.has(summary));
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), 'calgate-haproxy-'));
    socket = join(dir, 'admin.sock');
    [lbPort, ports[0], ports[1]] = await Promise.all([freePort(), freePort(), freePort()]);
    env = {
      ...HIGH_RATE_LIMITS,
      DATABASE_URL: db.url,
      REDIS_URL: redisUrl(),
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      PUBLIC_URL: `http://127.0.0.1:${lbPort}`,
    };
    const config = join(dir, 'haproxy.cfg');
    await writeFile(config, await haproxyConfig(socket, lbPort, ports as number[]));
    haproxy = spawn('haproxy', ['-db', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    let haproxyOut = '';
    haproxy.stderr?.on('data', (chunk) => (haproxyOut += String(chunk)));
    await until(
      async () => (await admin(socket, 'show info').catch(() => '')).includes('Name: HAProxy'),
      10_000,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${haproxyOut}`);
    });
    await Promise.all([
      startGateway(0),
      startGateway(1),
      startWorker(env, workers),
      startWorker(env, workers),
    ]);
    const tenancy = new TenancyRepository(db.prisma);
    const tenant = await tenancy.createTenant('Acme');
    const { key, secret } = await new ApiKeyRepository(db.prisma).create(tenant.id, { name: 'agent' });
    calendarId = (await tenancy.createLocalCalendar(tenant.id, { summary: 'Load', timeZone: 'UTC' })).id;
    await tenancy.setGrant(tenant.id, key.id, calendarId, { read: true, write: true });
    clients = await Promise.all(
      Array.from({ length: LOOPS }, () => connectClient(`http://127.0.0.1:${lbPort}/api/mcp`, secret)),
    );
  }, 60_000);

  afterAll(async () => {
    await Promise.all(loads.map((load) => load.stop()));
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await Promise.all(
      gateways.map((gateway) =>
        gateway.child.exitCode === null && gateway.child.signalCode === null ? gateway.stop() : undefined,
      ),
    );
    for (const worker of workers) {
      worker.kill('SIGTERM');
    }
    haproxy?.kill('SIGTERM');
    await db?.close();
    if (dir !== undefined) {
      await rm(dir, { recursive: true, force: true });
    }
  });

  /** Waits until the load has made `calls` more successful calls. */
  const afterCalls = async (report: LoadReport, calls: number) => {
    const target = report.done.length + calls;
    await until(() => report.done.length >= target, 20_000).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${JSON.stringify(report).slice(0, 2_000)}`);
    });
  };

  it('a rolling restart of the gateways under load loses no call', async () => {
    const load = startLoad(clients, calendarId, 'rolling');
    loads.push(load);
    await afterCalls(load.report, 20);
    // The new version's processes start beside the old ones (on other ports), as on new machines.
    const fresh = await Promise.all(
      [0, 1].map(async () => {
        const port = await freePort();
        return { port, gateway: await spawnGatewayProcess({ ...env, PORT: String(port) }) };
      }),
    );
    for (const [index, next] of fresh.entries()) {
      const server = `gateways/g${index + 1}`;
      // Out of the balancer first (no new request reaches it), then a clean stop (SIGTERM: the
      // requests it is answering finish), then the new process in its place once /readyz says so.
      await admin(socket, `set server ${server} state maint`);
      await gateways[index]?.stop();
      await afterCalls(load.report, 10);
      gateways[index] = next.gateway;
      await admin(socket, `set server ${server} addr 127.0.0.1 port ${next.port}`);
      await admin(socket, `set server ${server} state ready`);
      await until(async () => (await serverStatus(socket, `g${index + 1}`)).startsWith('UP'), 10_000);
      await afterCalls(load.report, 10);
    }
    const report = await load.stop();
    expect(report.transport).toEqual([]);
    expect(report.toolErrors).toEqual([]);
    expect(report.done.length).toBeGreaterThan(50);
    expect(await missing(report.done)).toEqual([]);
  }, 60_000);

  it('a migration applied while the old gateways serve keeps them answering', async () => {
    const load = startLoad(clients, calendarId, 'migrating');
    loads.push(load);
    await afterCalls(load.report, 20);
    // What an upgrade's migration does to a table the gateways write all the time: a new column
    // the old code does not know, and a new table.
    const sql =
      'ALTER TABLE "local_events" ADD COLUMN "ops_probe" TEXT;\nCREATE TABLE "ops_probe_notes" ("id" TEXT PRIMARY KEY, "note" TEXT NOT NULL);\n';
    const probe = {
      name: '29991231000000_ops_probe',
      sql,
      checksum: createHash('sha256').update(sql).digest('hex'),
    };
    const report = await migrate(db.pool, [...(await loadMigrations()), probe]);
    expect(report.applied).toEqual([probe.name]);
    await afterCalls(load.report, 30);
    const answered = await load.stop();
    expect(answered.transport).toEqual([]);
    expect(answered.toolErrors).toEqual([]);
    expect(await missing(answered.done)).toEqual([]);
    // Both old gateways still serve, and the workers still run.
    for (const gateway of gateways) {
      expect((await fetch(`${gateway.url}/readyz`)).status).toBe(200);
    }
    expect(workers.size).toBe(2);
  }, 60_000);

  it('kill -9 of a gateway mid-load fails only the calls in flight on it; no success is lost', async () => {
    const load = startLoad(clients, calendarId, 'killed');
    loads.push(load);
    await afterCalls(load.report, 20);
    const victim = gateways[0] as GatewayProcess;
    const exited = new Promise((resolve) => victim.child.once('exit', resolve));
    victim.child.kill('SIGKILL');
    await exited;
    // The balancer notices (its health check, or the refused connection) and sends the rest on.
    await afterCalls(load.report, 30);
    const report = await load.stop();
    // Each client had one call in flight at the kill; only those sent to the killed process fail,
    // so no client sees more than one failure.
    const failuresPerClient = new Set(report.transport.map((failure) => failure.split(':')[0]));
    expect(failuresPerClient.size).toBe(report.transport.length);
    expect(report.toolErrors).toEqual([]);
    expect(await missing(report.done)).toEqual([]);
  }, 60_000);
});
