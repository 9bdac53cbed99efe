/**
 * MCP Inspector's CLI (`@modelcontextprotocol/inspector`, pinned, `--cli`), as a person checking a
 * server by hand runs it, against `calgate serve` as its own process: it lists the key's tools
 * and calls one, with the API key as a header.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { ApiKeyRepository, TenancyRepository } from '@calgate/store';
import { createTestDatabase, freePort, redisUrl, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, spawnGatewayProcess } from './harness.ts';

const run = promisify(execFile);
const INSPECTOR_VERSION = '2.12.0';
const PACKAGE = dirname(
  createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector/package.json'),
);

let db: TestDatabase;
let gateway: GatewayProcess;
let secret: string;
let calendarId: string;
let home: string;

/** One run of `inspector --cli` against the gateway; its JSON answer. */
async function inspector(...args: string[]): Promise<Record<string, unknown>> {
  const bin = join(PACKAGE, 'clients', 'launcher', 'build', 'index.js');
  const { stdout } = await run(
    process.execPath,
    [
      bin,
      '--cli',
      gateway.mcpUrl,
      '--transport',
      'http',
      '--header',
      `Authorization: Bearer ${secret}`,
      ...args,
    ],
    // Its own home, so nothing of the person running the tests is read or written.
    { timeout: 60_000, env: { PATH: process.env.PATH, HOME: home } },
  );
  return JSON.parse(stdout) as Record<string, unknown>;
}

beforeAll(async () => {
  db = await createTestDatabase();
  const tenancy = new TenancyRepository(db.prisma);
  const tenant = await tenancy.createTenant('Inspector');
  const created = await new ApiKeyRepository(db.prisma).create(tenant.id, { name: 'inspector' });
  secret = created.secret;
  calendarId = (await tenancy.createLocalCalendar(tenant.id, { summary: 'Work', timeZone: 'Europe/Berlin' }))
    .id;
  await tenancy.setGrant(tenant.id, created.key.id, calendarId, { read: true, write: true });
  const port = await freePort();
  gateway = await spawnGatewayProcess({
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
  });
  home = await mkdtemp(join(tmpdir(), 'calgate-inspector-'));
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await db?.close();
  if (home !== undefined) {
    await rm(home, { recursive: true, force: true });
  }
});

describe(`MCP Inspector ${INSPECTOR_VERSION} CLI against calgate serve`, () => {
  it('is the pinned version', async () => {
    const { version } = JSON.parse(await readFile(join(PACKAGE, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(version).toBe(INSPECTOR_VERSION);
  });

  it('lists the key’s tools with their titles', async () => {
    const listed = (await inspector('--method', 'tools/list')) as {
      tools: { name: string; title?: string }[];
    };
    const names = listed.tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['list_calendars', 'list_events', 'create_event']));
    for (const tool of listed.tools) {
      expect(tool.title, tool.name).toBeTruthy();
    }
  }, 60_000);

  it('calls list_calendars and reads the granted calendar', async () => {
    const result = (await inspector('--method', 'tools/call', '--tool-name', 'list_calendars')) as {
      isError?: boolean;
      structuredContent?: { calendars?: { id: string; summary: string }[] };
    };
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent?.calendars).toEqual([
      expect.objectContaining({ id: calendarId, summary: 'Work' }),
    ]);
  }, 60_000);
});
