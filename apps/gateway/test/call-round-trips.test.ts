import { Socket } from 'node:net';
import { redisUrl } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, connectClient2026, startTestGateway, type TestGateway, textOf } from './harness.ts';

const RULE = { rrule: 'FREQ=DAILY', dtstart: '2026-01-05T09:30:00', timeZone: 'America/New_York', count: 3 };

/** What the gateway (in this process) writes to Redis while `run` runs, one entry per socket write. */
async function redisWrites(run: () => Promise<unknown>): Promise<string[]> {
  const port = Number(new URL(redisUrl()).port);
  const writes: string[] = [];
  const write = Socket.prototype.write;
  Socket.prototype.write = function (this: Socket, chunk: unknown, ...rest: unknown[]) {
    if (this.remotePort === port) {
      writes.push(String(chunk));
    }
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof write;
  try {
    await run();
  } finally {
    Socket.prototype.write = write;
  }
  return writes;
}

describe("a tool call's fixed work: its rate limit and its concurrency slot", () => {
  let gw: TestGateway;
  let tenant: { tenantId: string; keyId: string; secret: string };
  let client: Client;

  beforeAll(async () => {
    gw = await startTestGateway({
      RATE_LIMIT_PER_MINUTE: '600',
      RATE_LIMIT_BURST: '6',
      MCP_MAX_CONCURRENT_PER_KEY: '1',
      MCP_MAX_QUEUED_PER_KEY: '0',
    });
    tenant = await gw.seedTenant('Round trips');
    client = await connectClient(gw.mcpUrl, tenant.secret);
  });

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
  });

  it('are asked of Redis in one round trip, for 2025-11-25 and 2026-07-28 clients alike', async () => {
    const modern = await connectClient2026(gw.mcpUrl, tenant.secret);
    try {
      for (const caller of [client, modern]) {
        const writes = await redisWrites(async () => {
          const result = await caller.callTool({ name: 'expand_rrule', arguments: RULE });
          expect(result.isError).toBeFalsy();
        });
        const rateLimit = writes.filter((write) => write.includes(`calgate:rl:${tenant.keyId}`));
        expect(rateLimit).toHaveLength(1);
        expect(rateLimit[0]).toContain(`calgate:turns:{${tenant.keyId}}:h`);
      }
    } finally {
      await modern.close();
    }
  });

  it('a call refused before it runs gives its slot back (one slot, no queue: a kept slot would refuse the next call)', async () => {
    // The rate limit's bucket (6, refilled at 10 a second) full again after the calls above.
    await new Promise((resolve) => setTimeout(resolve, 700));
    const invalid = await client.callTool({ name: 'expand_rrule', arguments: { ...RULE, count: 'three' } });
    expect(invalid.isError).toBe(true);
    const unknown = await client
      .callTool({ name: 'no_such_tool', arguments: {} })
      .catch((error: unknown) => error);
    expect(unknown).toBeDefined();
    const next = await client.callTool({ name: 'expand_rrule', arguments: RULE });
    expect(textOf(next)).toContain('2026-01-07T09:30:00');
    expect(next.isError).toBeFalsy();
  });

  it('a call over the rate limit gives its slot back', async () => {
    const answers = [];
    for (let i = 0; i < 10; i++) {
      answers.push(await client.callTool({ name: 'expand_rrule', arguments: RULE }));
    }
    const refused = answers.filter((answer) => answer.isError);
    expect(refused.length).toBeGreaterThan(0);
    expect(textOf(refused[0] as (typeof answers)[number])).toMatch(/rate limit|Too many|retry/i);
    // The bucket refills at 10 a second; the one slot is free again.
    await new Promise((resolve) => setTimeout(resolve, 400));
    const next = await client.callTool({ name: 'expand_rrule', arguments: RULE });
    expect(next.isError).toBeFalsy();
  });
});
