/**
 * The official MCP conformance suite's authorization-server scenarios (pinned, as in
 * conformance.test.ts) against Calgate's own authorization server. The authorization code grant
 * goes through the real consent flow: the suite prints the authorization URL a person would open,
 * the test opens it and answers Calgate's consent page as the signed-in owner, and the browser's
 * redirect lands on the suite's own callback, which then exchanges the code for a token.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, sessionFor } from './api-client.ts';
import {
  connectClient2026,
  HIGH_RATE_LIMITS,
  startTestGateway,
  type TestGateway,
  textOf,
} from './harness.ts';
import { approveApp, consentRequest, decide, registerClient, startCallback } from './oauth-flow.ts';

const SUITE = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js');

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

describe('MCP conformance suite, authorization-server scenarios; a 2026-07-28 client through OAuth', () => {
  let gw: TestGateway;
  let owner: Browser;
  let calendarId: string;
  let output: string;

  beforeAll(async () => {
    const port = await freePort();
    gw = await startTestGateway({
      ...HIGH_RATE_LIMITS,
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      // The dashboard calls of api-client.ts come from this origin.
      ALLOWED_ORIGINS: 'http://calgate.test',
      // The suite's callback listens on loopback.
      OAUTH_ALLOW_PRIVATE_CLIENTS: 'true',
    });
    const tenant = await gw.seedTenant('Acme');
    calendarId = await gw.localCalendar(tenant.tenantId, 'Work');
    owner = await sessionFor(gw, tenant.tenantId);
    output = await mkdtemp(join(tmpdir(), 'calgate-conformance-auth-'));
  });

  afterAll(async () => {
    await gw?.stop();
    if (output !== undefined) {
      await rm(output, { recursive: true, force: true });
    }
  });

  it('passes both authorization-server scenarios, the code grant through the consent page', async () => {
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    const registered = await registerClient(gw, { client_name: 'Conformance', redirect_uris: [redirectUri] });
    expect(registered.status).toBe(201);
    const clientId = registered.body.client_id as string;
    // Both scenarios in one suite process: the code grant reads the metadata the first one fetched.
    const child = spawn(
      process.execPath,
      [
        SUITE,
        'authorization',
        '--url',
        gw.url,
        '--client-id',
        clientId,
        '--resource',
        gw.mcpUrl,
        '--port',
        String(port),
        '-o',
        output,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let opened: Promise<void> | undefined;
    // What the person's browser does: Calgate sends it to the consent page, the owner allows, and
    // the redirect lands on the suite's callback.
    const consent = async (url: string) => {
      const started = await fetch(url, { redirect: 'manual' });
      const decided = await decide(gw, owner, consentRequest(started.headers.get('location')), {
        decision: 'allow',
        calendars: [{ calendarId, read: true, write: false }],
      });
      expect(decided.status).toBe(200);
      await fetch(decided.body.redirectTo as string);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /^(http\S+\/oauth\/authorize\?\S+)$/m.exec(out)?.[1];
      if (url !== undefined && opened === undefined) {
        opened = consent(url);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    await new Promise((resolve) => child.once('exit', resolve));
    await opened;
    const results: Record<string, Check[]> = {};
    for (const dir of await readdir(output)) {
      const name = /^authorization-server-(.+)-\d{4}-\d\d-\d\dT/.exec(dir)?.[1] ?? dir;
      results[name] = JSON.parse(await readFile(join(output, dir, 'checks.json'), 'utf8')) as Check[];
    }
    expect(Object.keys(results).sort(), out).toEqual([
      'authorization-code-grant',
      'authorization-server-metadata-endpoint',
    ]);
    for (const [name, checks] of Object.entries(results)) {
      expect(checks.length, `${name}\n${out}`).toBeGreaterThan(0);
      expect(
        checks
          .filter((check) => check.status !== 'SUCCESS')
          .map((check) => `${check.id}: ${check.status} ${check.errorMessage}`),
        `${name}\n${out}`,
      ).toEqual([]);
    }
  }, 120_000);

  it('lets a 2026-07-28 client in with the access token the consent flow gave its app', async () => {
    const callback = await startCallback();
    try {
      const { tokens } = await approveApp(gw, owner, callback, {
        calendars: [{ calendarId, read: true, write: false }],
      });
      const client = await connectClient2026(gw.mcpUrl, tokens.access_token);
      expect(client.getProtocolEra()).toBe('modern');
      const listed = await client.callTool({ name: 'list_calendars', arguments: {} });
      expect(listed.isError).toBeFalsy();
      expect(textOf(listed)).toContain('Work');
      // Read only, as the person chose: no write tools.
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).not.toContain('create_event');
      await client.close();
    } finally {
      await callback.close();
    }
  });
});
