import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, startDashboardGateway } from './browser.ts';
import { startTestGateway, type TestGateway } from './harness.ts';

/** What a browser-based MCP client does: a POST with a bearer key, which needs a preflight. */
async function listToolsFrom(page: Page, mcpUrl: string, secret: string) {
  return page.evaluate(
    async ({ url, key }) => {
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-11-25',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
        });
        const body = (await response.json()) as { result?: { tools?: unknown[] } };
        return {
          status: response.status,
          tools: body.result?.tools?.length ?? 0,
          challenge: response.headers.get('www-authenticate'),
        };
      } catch (error) {
        return { failed: String(error) };
      }
    },
    { url: mcpUrl, key: secret },
  );
}

describe('a page on another loopback port calling /api/mcp in Chromium', () => {
  let loopback: TestGateway;
  let remote: TestGateway;
  let site: Server;
  let browser: Browser;
  let page: Page;
  let loopbackMcp: string;
  let loopbackSecret: string;
  let publicSecret: string;

  beforeAll(async () => {
    loopback = await startDashboardGateway();
    loopbackMcp = loopback.mcpUrl;
    loopbackSecret = (await loopback.seedTenant()).secret;
    remote = await startTestGateway();
    publicSecret = (await remote.seedTenant()).secret;
    site = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>client</title>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(`http://localhost:${(site.address() as AddressInfo).port}/`);
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => site?.close(resolve));
    await loopback?.stop();
    await remote?.stop();
  });

  it('passes the preflight and reads the answer, and the challenge of a 401', async () => {
    const ok = await listToolsFrom(page, loopbackMcp, loopbackSecret);
    expect(ok).toMatchObject({ status: 200 });
    expect((ok as { tools: number }).tools).toBeGreaterThan(0);
    const refused = await listToolsFrom(page, loopbackMcp, `${loopbackSecret}x`);
    expect(refused).toMatchObject({
      status: 401,
      challenge: expect.stringMatching(/^Bearer realm="calgate"/),
    });
  });

  it('is stopped by the preflight when the gateway is not a loopback one', async () => {
    const result = await listToolsFrom(page, remote.mcpUrl, publicSecret);
    expect(result).toMatchObject({ failed: expect.stringMatching(/Failed to fetch/) });
  });
});
