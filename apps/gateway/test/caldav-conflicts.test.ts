/**
 * CalDAV write conflicts over MCP, against Radicale and Xandikos: an independent client changes
 * an event on the server between Calgate's read of it and Calgate's PUT (a loopback proxy in front
 * of the server makes that change land just before the first If-Match PUT it forwards). The 412
 * is read again and the edit applied once more when the other client changed other properties
 * (both edits kept); when it changed a property Calgate was asked to change too, the answer is a
 * conflict naming the event and the other client's edit stays.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  oneEvent,
  startInterceptingProxy,
  startRadicale,
  startXandikos,
  type TestCaldavServer,
} from '../../../packages/providers/test/caldav/servers.ts';
import { caldavEnv, connectCaldavAccount } from './caldav-fixture.ts';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

interface RacingProxy {
  root: string;
  /** Before the next If-Match PUT to `path` is forwarded, `change` runs (another client's edit). */
  arm(path: string, change: () => Promise<void>): void;
  /** The statuses the server gave the If-Match PUTs to each path, in order. */
  puts: Map<string, number[]>;
  stop(): Promise<void>;
}

/** A loopback proxy in front of `target` that lets another client's edit land before a PUT. */
async function startRacingProxy(target: string): Promise<RacingProxy> {
  const armed = new Map<string, () => Promise<void>>();
  const puts = new Map<string, number[]>();
  const proxy = await startInterceptingProxy(target, async ({ req, forward }) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', target).pathname);
    const conditional = req.method === 'PUT' && req.headers['if-match'] !== undefined;
    const change = conditional ? armed.get(path) : undefined;
    if (change !== undefined) {
      armed.delete(path);
      await change();
    }
    forward((status) => {
      if (conditional) {
        puts.set(path, [...(puts.get(path) ?? []), status]);
      }
    });
  });
  return { ...proxy, arm: (path, change) => armed.set(path, change), puts };
}

describe.each([
  ['Radicale', startRadicale],
  ['Xandikos', startXandikos],
] as const)('CalDAV write conflicts on %s', (_name, start) => {
  let server: TestCaldavServer;
  let proxy: RacingProxy;
  let gw: TestGateway;
  let client: Client;
  let calendarId = '';
  let workPath = '';

  /** The object at `name` as the server holds it. */
  const stored = async (name: string) => (await server.raw('GET', `${workPath}${name}`)).text();
  /** Another client's edit: the object read and PUT back with `edit` applied, under its ETag. */
  const otherClient = (name: string, edit: (text: string) => string) => async () => {
    const read = await server.raw('GET', `${workPath}${name}`);
    const etag = read.headers.get('etag') ?? '';
    const put = await server.raw('PUT', `${workPath}${name}`, edit(await read.text()), {
      'content-type': 'text/calendar; charset=utf-8',
      'if-match': etag,
    });
    expect(put.status).toBeLessThan(300);
  };
  const eventIdOf = async (summary: string) => {
    const result = await client.callTool({
      name: 'list_events',
      arguments: {
        calendarId,
        timeMin: '2027-03-01T00:00:00Z',
        timeMax: '2027-03-31T00:00:00Z',
        format: 'json',
      },
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const events = (result.structuredContent as { events: { id: string; summary?: string }[] }).events;
    const found = events.find((event) => event.summary === summary);
    expect(found, JSON.stringify(events)).toBeDefined();
    return (found as { id: string }).id;
  };

  beforeAll(async () => {
    server = await start();
    workPath = `${new URL(server.home).pathname}work/`;
    await server.makeCalendar(workPath, { displayName: 'Work', timeZone: 'Europe/Berlin' });
    await server.seed(
      `${workPath}budget.ics`,
      oneEvent('budget@hand', [
        'SUMMARY:Budget review',
        'LOCATION:Room 1',
        'DTSTART:20270310T090000Z',
        'DTEND:20270310T100000Z',
      ]),
    );
    await server.seed(
      `${workPath}planning.ics`,
      oneEvent('planning@hand', [
        'SUMMARY:Quarterly planning',
        'LOCATION:Room 3',
        'DTSTART:20270311T090000Z',
        'DTEND:20270311T100000Z',
      ]),
    );
    proxy = await startRacingProxy(server.root);
    const env = caldavEnv();
    gw = await startTestGateway(env);
    const tenant = await gw.seedTenant('Racer');
    await gw.runtime.keys.setDefaults(tenant.tenantId, tenant.keyId, { hijackPolicy: 'off' });
    const connected = await connectCaldavAccount(gw, env, { ...server, root: proxy.root }, tenant);
    calendarId = connected.calendars.find((c) => c.summary === 'Work')?.id as string;
    expect(calendarId).toBeTruthy();
    gw.forgetKeys(tenant.tenantId);
    client = await connectClient(gw.mcpUrl, tenant.secret);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await proxy?.stop();
    await server?.stop();
  });

  it('re-reads and applies the edit again when another client changed other properties: both kept', async () => {
    const eventId = await eventIdOf('Budget review');
    proxy.arm(
      `${workPath}budget.ics`,
      otherClient('budget.ics', (text) => text.replace('LOCATION:Room 1', 'LOCATION:Room 2')),
    );
    const result = await client.callTool({
      name: 'update_event',
      arguments: { calendarId, eventId, summary: 'Budget review (final)' },
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    // The first PUT met the other client's version (412), the second was applied to it.
    expect(proxy.puts.get(`${workPath}budget.ics`)?.[0]).toBe(412);
    expect(proxy.puts.get(`${workPath}budget.ics`)?.at(-1)).toBeLessThan(300);
    const text = await stored('budget.ics');
    expect(text).toContain('SUMMARY:Budget review (final)');
    expect(text).toContain('LOCATION:Room 2');
    expect(text).not.toContain('LOCATION:Room 1');
  });

  it('answers a conflict naming the event when another client changed the same property: its edit kept', async () => {
    const eventId = await eventIdOf('Quarterly planning');
    proxy.arm(
      `${workPath}planning.ics`,
      otherClient('planning.ics', (text) =>
        text.replace('SUMMARY:Quarterly planning', 'SUMMARY:Quarterly planning (moved to April)'),
      ),
    );
    const result = await client.callTool({
      name: 'update_event',
      arguments: { calendarId, eventId, summary: 'Quarterly planning and budget' },
    });
    expect(result.isError).toBe(true);
    const message = textOf(result);
    expect(message).toContain('Quarterly planning');
    expect(message).toMatch(/changed on the CalDAV server/);
    expect(message).toContain('summary');
    expect(message).toContain('nothing was written');
    expect(message).not.toMatch(/\n\s+at /);
    expect(proxy.puts.get(`${workPath}planning.ics`)?.[0]).toBe(412);
    expect(proxy.puts.get(`${workPath}planning.ics`)?.some((status) => status < 300)).toBe(false);
    const text = await stored('planning.ics');
    expect(text).toContain('SUMMARY:Quarterly planning (moved to April)');
    expect(text).not.toContain('Quarterly planning and budget');
    expect(text).toContain('LOCATION:Room 3');
  });
});
