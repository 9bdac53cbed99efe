/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against `calgate serve`
 * as its own process on loopback, as an operator runs it. The suite sends no Authorization
 * header, so it talks to a small loopback proxy that adds the key's bearer and forwards
 * everything else (Host and Origin included) unchanged.
 */
import { execFile } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { ApiKeyRepository, TenancyRepository } from '@calgate/store';
import { createTestDatabase, freePort, redisUrl, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, HIGH_RATE_LIMITS, spawnGatewayProcess } from './harness.ts';

const run = promisify(execFile);
const SUITE = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js');
const SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'logging-set-level',
  'dns-rebinding-protection',
];

/** A tenant with one API key, written to the database the gateway process serves. */
async function seedKey(db: TestDatabase): Promise<string> {
  const tenant = await new TenancyRepository(db.prisma).createTenant('Conformance');
  const { secret } = await new ApiKeyRepository(db.prisma).create(tenant.id, { name: 'conformance' });
  return secret;
}

describe('MCP conformance suite, server scenarios', () => {
  let db: TestDatabase;
  let gateway: GatewayProcess;
  let proxy: Server;
  let proxyUrl: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const secret = await seedKey(db);
    const port = await freePort();
    gateway = await spawnGatewayProcess({
      ...HIGH_RATE_LIMITS,
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: db.url,
      REDIS_URL: redisUrl(),
    });
    proxy = createServer((incoming, outgoing) => {
      const forwarded = request(
        {
          host: '127.0.0.1',
          port,
          method: incoming.method,
          path: incoming.url,
          headers: { ...incoming.headers, authorization: `Bearer ${secret}` },
        },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      forwarded.on('error', () => outgoing.destroy());
      incoming.pipe(forwarded);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api/mcp`;
  });

  afterAll(async () => {
    proxy?.closeAllConnections();
    await new Promise((resolve) => proxy?.close(resolve));
    await gateway?.stop();
    await db?.close();
  });

  for (const scenario of SCENARIOS) {
    it(`passes ${scenario}`, async () => {
      const result = await run(
        process.execPath,
        [SUITE, 'server', '--url', proxyUrl, '--scenario', scenario],
        {
          timeout: 60_000,
        },
      ).catch((error: { stdout?: string; stderr?: string; code?: number }) => ({
        stdout: error.stdout ?? '',
        stderr: `${error.stderr ?? ''} (exit ${error.code})`,
        failed: true,
      }));
      expect('failed' in result, `${result.stdout}\n${result.stderr}`).toBe(false);
      expect(result.stdout).not.toMatch(/\bFAIL(ED)?\b/);
      // At least one check ran, and every one passed.
      expect(result.stdout).toMatch(/Passed: ([1-9]\d*)\/\1, 0 failed/);
    }, 90_000);
  }
});
