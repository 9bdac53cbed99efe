/**
 * Two gateways on one database and one Redis, for tests that compare reads through the event
 * mirror with reads from the provider: `gw` syncs the mirror (its worker runs in process) and
 * reads from it; `direct` has MIRROR_READS=false and reads every event upstream. Also what such
 * tests do next: wait for the mirror's first sync, and read over MCP from either gateway.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, expect } from 'vitest';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

/**
 * Starts both gateways with `env`; `mirror` adds settings for the syncing one (by default a
 * 2-second MIRROR_MAX_STALENESS).
 */
export async function startMirroredAndDirect(
  env: Record<string, string>,
  mirror: Record<string, string> = {},
): Promise<{ gw: TestGateway; direct: TestGateway }> {
  const gw = await startTestGateway({
    ...env,
    WORKER_IN_PROCESS: 'true',
    MIRROR_MAX_STALENESS: '2',
    ...mirror,
  });
  const direct = await startTestGateway({ ...env, MIRROR_READS: 'false' }, { db: gw.db });
  return { gw, direct };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Until the first sync has run, reads go upstream: lists `args` through `gw` as the key `secret`
 * until the mirror answers (the page carries `syncedAt`), for at most 20 seconds.
 */
export async function waitForMirror(
  gw: TestGateway,
  secret: string,
  args: Record<string, unknown>,
): Promise<void> {
  const client = await connectClient(gw.mcpUrl, secret);
  try {
    const until = Date.now() + 20_000;
    for (;;) {
      const page = await client.callTool({ name: 'list_events', arguments: args });
      if ((page.structuredContent as { syncedAt?: string }).syncedAt !== undefined) {
        break;
      }
      if (Date.now() > until) {
        throw new Error('the mirror never synced');
      }
      await sleep(300);
    }
  } finally {
    await client.close();
  }
}

export interface ReadsVia<E> {
  /** The describe's client, connected before its first test. */
  client(): Client;
  /** Calls the tool and expects an answer that is no error. */
  call(name: string, args: Record<string, unknown>): Promise<Awaited<ReturnType<Client['callTool']>>>;
  /** Lists the calendar; through the mirror the page carries `syncedAt`, read upstream it does not. */
  listed(): Promise<{ result: Awaited<ReturnType<Client['callTool']>>; events: E[] }>;
}

/**
 * For a describe that reads through one of the two gateways: before its tests, `before` runs and
 * a client connects to `gateway()` as `secret()`; after them, the client closes. `list()` is what
 * `listed()` asks list_events for.
 */
export function readsVia<E>(options: {
  mirrored: boolean;
  gateway: () => TestGateway;
  secret: () => string;
  list: () => Record<string, unknown>;
  before?: () => Promise<unknown>;
}): ReadsVia<E> {
  let client: Client;
  beforeAll(async () => {
    await options.before?.();
    client = await connectClient(options.gateway().mcpUrl, options.secret());
  });
  afterAll(async () => {
    await client?.close();
  });
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
    return result;
  };
  const listed = async () => {
    const result = await call('list_events', options.list());
    const out = result.structuredContent as { events: E[]; syncedAt?: string };
    if (options.mirrored) {
      expect(out.syncedAt).toEqual(expect.any(String));
    } else {
      expect(out.syncedAt).toBeUndefined();
    }
    return { result, events: out.events };
  };
  return { client: () => client, call, listed };
}
