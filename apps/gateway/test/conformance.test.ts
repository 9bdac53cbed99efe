/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against a real gateway
 * on loopback. The suite sends no Authorization header, so it talks to a small loopback proxy that
 * adds the key's bearer and forwards everything else (Host and Origin included) unchanged.
 */
import { execFile } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { freePort } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HIGH_RATE_LIMITS, startTestGateway, type TestGateway } from './harness.ts';

const run = promisify(execFile);
const SUITE = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js');
const SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'logging-set-level',
  'dns-rebinding-protection',
];

describe('MCP conformance suite, server scenarios', () => {
  let gw: TestGateway;
  let proxy: Server;
  let proxyUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    gw = await startTestGateway({
      ...HIGH_RATE_LIMITS,
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
    });
    const { secret } = await gw.seedTenant('Conformance');
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
    await gw?.stop();
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
    }, 90_000);
  }
});
