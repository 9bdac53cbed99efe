import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient } from './harness.ts';
import { npmStart, stop } from './npm-start.ts';

describe('npm start on a fresh checkout (embedded PostgreSQL, in-process locks)', () => {
  let dataDir: string;
  let port: number;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'calgate-start-'));
    port = await freePort();
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('creates a tenant, a calendar and a key on the first run, prints them once, and keeps them', async () => {
    const first = await npmStart(dataDir, port);
    let secret: string;
    try {
      const out = first.output();
      const mcpUrl = `http://127.0.0.1:${port}/api/mcp`;
      expect(out).toContain(`MCP endpoint: ${mcpUrl}`);
      secret = /API key:\s+(cg_live_[A-Za-z0-9]{32})/.exec(out)?.[1] ?? '';
      expect(secret).not.toBe('');
      expect(out).toContain('"mcpServers"');
      expect(out).toContain(`"Authorization": "Bearer ${secret}"`);
      expect(out).toContain('claude mcp add --transport http calgate');
      expect((await stat(join(dataDir, 'encryption-key'))).mode & 0o777).toBe(0o600);

      const client = await connectClient(mcpUrl, secret);
      const calendars = await client.callTool({ name: 'list_calendars', arguments: {} });
      const list = (calendars.structuredContent as { calendars: { summary: string; canWrite: boolean }[] })
        .calendars;
      expect(list).toEqual([expect.objectContaining({ summary: 'Calgate', canWrite: true })]);
      const events = await client.callTool({ name: 'list_events', arguments: {} });
      expect(events.isError).toBeFalsy();
      await client.close();
    } finally {
      await stop(first, dataDir);
    }

    const second = await npmStart(dataDir, port);
    try {
      const out = second.output();
      expect(out).not.toMatch(/cg_live_[A-Za-z0-9]{32}/);
      expect(out).toContain('API keys are shown only when created');
      const client = await connectClient(`http://127.0.0.1:${port}/api/mcp`, secret);
      const calendars = await client.callTool({ name: 'list_calendars', arguments: {} });
      expect((calendars.structuredContent as { calendars: unknown[] }).calendars).toHaveLength(1);
      await client.close();
    } finally {
      await stop(second, dataDir);
    }
  }, 120_000);
});
