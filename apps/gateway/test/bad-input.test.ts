import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

describe('bad input gets a specific isError result and never hurts the process', () => {
  let gw: TestGateway;
  let client: Client;
  let calendarId: string;

  beforeAll(async () => {
    gw = await startTestGateway();
    const tenant = await gw.seedTenant();
    calendarId = await gw.localCalendar(tenant.tenantId, 'Cal');
    await gw.grant(tenant.tenantId, tenant.keyId, calendarId, { read: true, write: true });
    client = await connectClient(gw.mcpUrl, tenant.secret);
  });
  afterAll(async () => {
    await client.close();
    await gw.stop();
  });

  const cases: [string, string, Record<string, unknown>, RegExp][] = [
    ['wrong type', 'list_events', { maxResults: 'ten' }, /'maxResults' must be a number, not a string/],
    ['boolean as string', 'list_events', { singleEvents: 'yes' }, /'singleEvents' must be a boolean/],
    [
      'unknown field with a suggestion',
      'list_events',
      { subject: 'x' },
      /Unknown property 'subject'\. Did you mean 'query'\?|Unknown property 'subject'/,
    ],
    [
      'misspelled field',
      'list_events',
      { timeMn: '2026-01-01T00:00:00Z' },
      /Unknown property 'timeMn'\. Did you mean 'timeMin'\?/,
    ],
    [
      'unknown field on a tool without parameters',
      'list_calendars',
      { verbose: true },
      /Unknown property 'verbose'/,
    ],
    [
      'timeMax before timeMin',
      'list_events',
      { timeMin: '2026-05-02T00:00:00Z', timeMax: '2026-05-01T00:00:00Z' },
      /timeMax must be later than timeMin/,
    ],
    [
      'a 10,000-year range',
      'list_events',
      { timeMin: '0001-01-01T00:00:00Z', timeMax: '9999-12-31T00:00:00Z' },
      /between the years 1900 and 2200/,
    ],
    [
      'a 200-year range',
      'list_events',
      { timeMin: '1950-01-01T00:00:00Z', timeMax: '2150-01-01T00:00:00Z' },
      /at most 5 years/,
    ],
    [
      'not a date-time',
      'list_events',
      { timeMin: 'tomorrow' },
      /'timeMin': must be RFC 3339 \(.*\), a local date-time \(.*\) or a date/,
    ],
    ['an impossible date', 'list_events', { timeMin: '2026-02-30T00:00:00Z' }, /RFC 3339/],
    ['a time without a date', 'list_events', { timeMin: '09:00' }, /'timeMin': must be RFC 3339/],
    ['maxResults too large', 'list_events', { maxResults: 2501 }, /'maxResults' is too large: at most 2500/],
    ['maxResults zero', 'list_events', { maxResults: 0 }, /at least 1/],
    ['maxResults fractional', 'list_events', { maxResults: 1.5 }, /maxResults/],
    [
      'oversized query',
      'list_events',
      { query: 'x'.repeat(10_000) },
      /'query' is too long: at most 500 characters/,
    ],
    ['oversized calendarId', 'list_events', { calendarId: 'c'.repeat(5000) }, /'calendarId' is too long/],
    ['bad orderBy', 'list_events', { orderBy: 'random' }, /'orderBy' must be one of "startTime", "updated"/],
    [
      'orderBy startTime without singleEvents',
      'list_events',
      { singleEvents: false, orderBy: 'startTime' },
      /needs singleEvents/,
    ],
    [
      'garbage page token',
      'list_events',
      { pageToken: '!!!not-a-token' },
      /pageToken is not a token Calgate issued/,
    ],
    ['null arguments inside', 'list_events', { calendarId: null }, /'calendarId' must be a string, not null/],
  ];

  for (const [label, tool, args, message] of cases) {
    it(`${label}: isError with a message that says what is wrong`, async () => {
      const result = await client.callTool({ name: tool, arguments: args });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(message);
      expect(textOf(result)).not.toMatch(/at .*\.ts:\d+|stack/i);
    });
  }

  const refusalOf = async (tool: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name: tool, arguments: args });
    expect(result.isError).toBe(true);
    return textOf(result);
  };

  it('lists the valid properties only for an unknown property', async () => {
    expect(await refusalOf('list_events', { maxResults: 'ten' })).toBe(
      "Invalid arguments for list_events: 'maxResults' must be a number, not a string.",
    );
    expect(await refusalOf('list_events', { timeMn: '2026-01-01T00:00:00Z' })).toMatch(
      /^Invalid arguments for list_events: Unknown property 'timeMn'\. Did you mean 'timeMin'\? Valid properties: calendarId, .*timeMin.*\.$/,
    );
  });

  it('says each problem in its own sentence, each ending with a period', async () => {
    expect(
      await refusalOf('list_events', { maxResults: 'ten', singleEvents: 'yes', orderBy: 'random' }),
    ).toBe(
      "Invalid arguments for list_events: 'maxResults' must be a number, not a string. 'singleEvents' must be a boolean, not a string. 'orderBy' must be one of \"startTime\", \"updated\".",
    );
    // A refinement's own message gets its period, and the next problem starts a new sentence.
    expect(
      await refusalOf('create_event', {
        calendarId,
        summary: 'x',
        start: {},
        end: { dateTime: 'Friday 10am' },
      }),
    ).toBe(
      "Invalid arguments for create_event: 'start': give exactly one of dateTime (timed) or date (all-day, YYYY-MM-DD). 'end.dateTime': 'Friday 10am' is not an RFC 3339 date-time such as 2026-04-20T09:00:00-07:00 or a local date-time such as 2026-04-20T09:00:00.",
    );
  });

  it('an unknown property inside an object gets a guess and the valid properties there', async () => {
    const text = await refusalOf('create_event', {
      calendarId,
      summary: 'x',
      start: { dateTim: '2026-05-01T10:00:00Z' },
      end: { dateTime: '2026-05-01T11:00:00Z' },
    });
    expect(text).toContain(
      "Unknown property 'start.dateTim'. Did you mean 'dateTime'? Valid properties of 'start': dateTime, date, timeZone.",
    );
    expect(text).not.toMatch(/Valid properties: /);
  });

  it('counts the problems it does not spell out in a sentence of their own', async () => {
    const text = await refusalOf('list_events', {
      maxResults: 'a',
      singleEvents: 'b',
      orderBy: 1,
      format: 'c',
      query: 2,
      pageToken: 3,
      calendarId: 4,
    });
    expect(text).toMatch(/\. 2 more problems are not shown\.$/);
    expect(text).not.toMatch(/Valid properties/);
  });

  it('a page token from another query is refused', async () => {
    const first = await client.callTool({
      name: 'list_events',
      arguments: { maxResults: 1, timeMin: '2026-01-01T00:00:00Z' },
    });
    expect(first.isError).toBeFalsy();
    const forged = Buffer.from(JSON.stringify({ v: 1, q: 'other', p: 1, s: {} })).toString('base64url');
    const result = await client.callTool({ name: 'list_events', arguments: { pageToken: forged } });
    expect(textOf(result)).toMatch(/different query/);
  });

  it('an unknown tool is a JSON-RPC error naming the tools that exist', async () => {
    await expect(client.callTool({ name: 'drop_tables', arguments: {} })).rejects.toThrow(
      /Unknown tool 'drop_tables'/,
    );
  });

  it('the process still serves normally after all of the above', async () => {
    const result = await client.callTool({ name: 'list_calendars', arguments: {} });
    expect(result.isError).toBeFalsy();
    const health = await fetch(`${gw.url}/healthz`);
    expect(health.status).toBe(200);
  });
});
