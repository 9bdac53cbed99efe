import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient } from './harness.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface Started {
  child: ChildProcess;
  output: () => string;
}

/** `npm start` as a user runs it: no DATABASE_URL, no REDIS_URL, only DATA_DIR and a port. */
async function npmStart(dataDir: string, port: number): Promise<Started> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    PORT: String(port),
    LOG_LEVEL: 'warn',
  };
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout?.on('data', (chunk) => (out += String(chunk)));
  child.stderr?.on('data', (chunk) => (out += String(chunk)));
  const deadline = Date.now() + 60_000;
  while (!/Calgate is running/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`npm start did not come up:\n${out}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // The welcome text is written in one piece after the server listens.
  await new Promise((resolve) => setTimeout(resolve, 100));
  return { child, output: () => out };
}

/** SIGTERM to the whole process group, then wait until the embedded Postgres has shut down too. */
async function stop(started: Started, dataDir: string): Promise<void> {
  const exited = new Promise((resolve) => started.child.once('exit', resolve));
  process.kill(-(started.child.pid ?? 0), 'SIGTERM');
  await exited;
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    try {
      await stat(join(dataDir, 'postgres', 'postmaster.pid'));
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the embedded PostgreSQL did not shut down');
}

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
