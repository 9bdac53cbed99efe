/**
 * import_events over MCP with the official SDK client: iCalendar text and feeds served by a local
 * HTTP server (webcal included), UIDs kept so a second import updates, bad text refused with
 * nothing changed, private addresses refused unless OUTBOUND_ALLOW_PRIVATE=true.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';
import {
  type ListedEvent,
  listJanuary,
  OFFSITE,
  REVIEW,
  type Time,
  vcalendar,
  vevent,
} from './ics-import-fixture.ts';

const STANDUP = vevent([
  'UID:standup-1@example.com',
  'DTSTART;TZID=Europe/Berlin:20260105T090000',
  'DTEND;TZID=Europe/Berlin:20260105T091500',
  'RRULE:FREQ=DAILY;COUNT=5',
  'SUMMARY:Standup',
]);
const STANDUP_MOVED = vevent([
  'UID:standup-1@example.com',
  'RECURRENCE-ID;TZID=Europe/Berlin:20260107T090000',
  'DTSTART;TZID=Europe/Berlin:20260107T140000',
  'DTEND;TZID=Europe/Berlin:20260107T141500',
  'SUMMARY:Standup (afternoon)',
]);
const STANDUP_CANCELLED = vevent([
  'UID:standup-1@example.com',
  'RECURRENCE-ID;TZID=Europe/Berlin:20260108T090000',
  'DTSTART;TZID=Europe/Berlin:20260108T090000',
  'DTEND;TZID=Europe/Berlin:20260108T091500',
  'STATUS:CANCELLED',
  'SUMMARY:Standup',
]);
const at = (time: Time) => time.dateTime ?? time.date;

describe('import_events', () => {
  let gw: TestGateway;
  let lan: TestGateway;
  let client: Client;
  let onLan: Client;
  let calendar = '';
  let copy = '';
  let feed: Server;
  let feedBase = '';
  let feedBody = '';
  const feedRequests: string[] = [];

  beforeAll(async () => {
    gw = await startTestGateway(HIGH_RATE_LIMITS);
    lan = await startTestGateway({ ...HIGH_RATE_LIMITS, OUTBOUND_ALLOW_PRIVATE: 'true' }, { db: gw.db });
    const owner = await gw.seedTenant('Importer');
    calendar = await gw.localCalendar(owner.tenantId, 'Work', 'Europe/Berlin');
    await gw.grant(owner.tenantId, owner.keyId, calendar, { read: true, write: true });
    copy = await gw.localCalendar(owner.tenantId, 'Copy', 'Europe/Berlin');
    await gw.grant(owner.tenantId, owner.keyId, copy, { read: true, write: true });
    await gw.runtime.keys.setDefaults(owner.tenantId, owner.keyId, { toolsets: ['calendar', 'ics'] });
    lan.forgetKeys(owner.tenantId);
    client = await connectClient(gw.mcpUrl, owner.secret);
    onLan = await connectClient(lan.mcpUrl, owner.secret);
    feed = createServer((request, response) => {
      feedRequests.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'text/calendar; charset=utf-8', etag: '"v1"' });
      response.end(feedBody);
    });
    await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
    feedBase = `127.0.0.1:${(feed.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await client?.close();
    await onLan?.close();
    await new Promise<void>((resolve) => feed?.close(() => resolve()));
    await lan?.stop();
    await gw?.stop();
  });

  async function call(on: Client, args: Record<string, unknown>) {
    return on.callTool({ name: 'import_events', arguments: { calendarId: calendar, ...args } });
  }

  const listing = (of = calendar) => listJanuary(client, of);

  it('imports every VEVENT of text, series with their overrides, keeping UIDs', async () => {
    const result = await call(client, {
      ics: vcalendar(STANDUP, STANDUP_MOVED, STANDUP_CANCELLED, OFFSITE, REVIEW),
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ imported: 3, updated: 0, skipped: 0, errors: [] });
    const events = await listing();
    expect(events.map((event) => [event.summary, at(event.start)])).toEqual([
      ['Standup', '2026-01-05T09:00:00+01:00'],
      ['Offsite', '2026-01-06'],
      ['Standup', '2026-01-06T09:00:00+01:00'],
      ['Review', '2026-01-06T16:00:00+01:00'],
      ['Standup (afternoon)', '2026-01-07T14:00:00+01:00'],
      ['Standup', '2026-01-09T09:00:00+01:00'],
    ]);
    const review = events.find((event) => event.summary === 'Review');
    expect(review && at(review.end)).toBe('2026-01-06T17:00:00+01:00');
    expect(events.find((event) => event.summary === 'Offsite')).toMatchObject({
      end: { date: '2026-01-08' },
      location: 'Lisbon',
    });
  });

  it('importing the same data again updates and never duplicates', async () => {
    const changed = vcalendar(
      STANDUP,
      STANDUP_MOVED,
      STANDUP_CANCELLED,
      OFFSITE.map((line) => (line === 'LOCATION:Lisbon' ? 'LOCATION:Porto' : line)),
      REVIEW,
    );
    const result = await call(client, { ics: changed });
    // The series (its overrides are written again) and the changed event; the unchanged one is skipped.
    expect(result.structuredContent).toMatchObject({ imported: 0, updated: 2, skipped: 1, errors: [] });
    const events = await listing();
    expect(events).toHaveLength(6);
    expect(events.find((event) => event.summary === 'Offsite')?.location).toBe('Porto');
  });

  it('text that is not iCalendar is refused with the reason, and nothing changes', async () => {
    const before = await listing();
    const result = await call(client, { ics: 'BEGIN:VCALENDAR\r\nthis is not a calendar\r\n' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/iCalendar text could not be read/);
    expect(textOf(result)).not.toMatch(/at .*\.ts:\d+/);
    expect(await listing()).toEqual(before);
  });

  it('an event that cannot be read is named by UID and line; the others are imported', async () => {
    const bad = vevent(['UID:broken@example.com', 'SUMMARY:No start']);
    const text = vcalendar(bad, REVIEW);
    const result = await call(client, { ics: text });
    const answer = result.structuredContent as { errors: { uid: string; line: number; message: string }[] };
    expect(result.structuredContent).toMatchObject({ imported: 0, updated: 0, skipped: 1 });
    expect(answer.errors).toEqual([
      { uid: 'broken@example.com', line: 6, message: expect.stringMatching(/DTSTART/) },
    ]);
    expect((await listing()).some((event) => event.summary === 'No start')).toBe(false);
  });

  it('exactly one of ics and url is needed', async () => {
    const result = await call(client, {});
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'Give exactly one of ics (the text of a VCALENDAR) or url (an http(s) or webcal address).',
    );
  });

  it('a feed on a loopback address is refused without OUTBOUND_ALLOW_PRIVATE, naming it', async () => {
    feedBody = vcalendar(REVIEW);
    const before = feedRequests.length;
    const result = await call(client, { url: `http://${feedBase}/team.ics` });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/loopback address.*OUTBOUND_ALLOW_PRIVATE=true/);
    expect(feedRequests.length).toBe(before);
  });

  it('imports from an http and a webcal URL where private addresses are allowed', async () => {
    feedBody = vcalendar(
      vevent([
        'UID:feed-1@example.com',
        'DTSTART;TZID=Europe/Berlin:20260120T100000',
        'DTEND;TZID=Europe/Berlin:20260120T110000',
        'SUMMARY:From the feed',
      ]),
    );
    const first = await call(onLan, { url: `http://${feedBase}/team.ics` });
    expect(first.isError, textOf(first)).toBeFalsy();
    expect(first.structuredContent).toMatchObject({ imported: 1, updated: 0, errors: [] });
    const again = await call(onLan, { url: `webcal://${feedBase}/team.ics` });
    expect(again.isError, textOf(again)).toBeFalsy();
    expect(again.structuredContent).toMatchObject({ imported: 0, updated: 0, skipped: 1, errors: [] });
    const events = await listing();
    expect(events.filter((event) => event.summary === 'From the feed')).toHaveLength(1);
    expect(feedRequests.at(-1)).toBe('/team.ics');
  });

  it('a URL that is not http(s) or webcal is refused', async () => {
    const result = await call(onLan, { url: 'ftp://example.com/cal.ics' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('A feed URL must be http(s) or webcal, not ftp.');
  });

  it('the events.ics resource exports the calendar, and importing it elsewhere gives the same events', async () => {
    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.map((template) => template.uriTemplate)).toContain(
      'calgate://calendars/{calendarId}/events.ics{?timeMin,timeMax}',
    );
    const read = await client.readResource({ uri: `calgate://calendars/${calendar}/events.ics` });
    const [content] = read.contents;
    expect(content?.mimeType).toBe('text/calendar');
    const text = String((content as { text?: string }).text);
    expect(text).toMatch(/^BEGIN:VCALENDAR\r\n/);
    expect(text).toContain('BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin');
    expect(text).toContain('UID:standup-1@example.com');
    expect(text).toContain('RRULE:FREQ=DAILY;COUNT=5');
    expect(text).toMatch(/RECURRENCE-ID;TZID=Europe\/Berlin:20260107T090000/);
    const imported = await call(client, { calendarId: copy, ics: text });
    expect(imported.isError, textOf(imported)).toBeFalsy();
    expect(imported.structuredContent).toMatchObject({ updated: 0, skipped: 0, errors: [] });
    const shape = (events: ListedEvent[]) =>
      events.map((event) => [event.summary, at(event.start), at(event.end), event.location]);
    expect(shape(await listing(copy))).toEqual(shape(await listing(calendar)));
    const ranged = await client.readResource({
      uri: `calgate://calendars/${calendar}/events.ics?timeMin=2026-01-20&timeMax=2026-01-21`,
    });
    const part = String((ranged.contents[0] as { text?: string }).text);
    expect(part).toContain('SUMMARY:From the feed');
    expect(part).not.toContain('SUMMARY:Offsite');
  });

  it('a calendar the key cannot read is an unknown resource', async () => {
    await expect(client.readResource({ uri: 'calgate://calendars/cal_nope/events.ics' })).rejects.toThrow(
      /not found|Unknown/i,
    );
  });
});

/**
 * An iCalendar text is taken up to the answer-size budget (MCP_MAX_ANSWER_BYTES, counted in UTF-8
 * bytes): exactly that much is imported, one byte more is refused naming the limit and the {url}
 * form, with nothing written.
 */
describe('import_events text size', () => {
  const LIMIT = 64 * 1024;
  let small: TestGateway;
  let plain: TestGateway;
  let onSmall: Client;
  let onPlain: Client;
  let calendar = '';

  /** One event under `uid` whose text is exactly `bytes` bytes of UTF-8 (an X- property pads it). */
  const sized = (uid: string, bytes: number): string => {
    const text = (pad: string) =>
      vcalendar(
        vevent([
          `UID:${uid}`,
          'DTSTART:20260120T100000Z',
          'DTEND:20260120T110000Z',
          `SUMMARY:Sized ${uid}`,
          `X-PAD:${pad}`,
        ]),
      );
    const room = bytes - Buffer.byteLength(text(''), 'utf8');
    // Two-byte characters as well, so that bytes (not characters) are what is counted.
    const pad = 'é'.repeat(Math.floor(room / 4)) + 'x'.repeat(room - 2 * Math.floor(room / 4));
    const out = text(pad);
    expect(Buffer.byteLength(out, 'utf8')).toBe(bytes);
    return out;
  };
  const importText = (on: Client, ics: string) =>
    on.callTool({ name: 'import_events', arguments: { calendarId: calendar, ics } });
  const summaries = async (on: Client) =>
    (await listJanuary(on, calendar))
      .map((event) => event.summary ?? '')
      .filter((s) => s.startsWith('Sized'));

  beforeAll(async () => {
    small = await startTestGateway({ ...HIGH_RATE_LIMITS, MCP_MAX_ANSWER_BYTES: String(LIMIT) });
    plain = await startTestGateway(HIGH_RATE_LIMITS, { db: small.db });
    const owner = await small.seedTenant('Sizes');
    calendar = await small.localCalendar(owner.tenantId, 'Sizes', 'Europe/Berlin');
    await small.grant(owner.tenantId, owner.keyId, calendar, { read: true, write: true });
    await small.runtime.keys.setDefaults(owner.tenantId, owner.keyId, { toolsets: ['calendar', 'ics'] });
    plain.forgetKeys(owner.tenantId);
    onSmall = await connectClient(small.mcpUrl, owner.secret);
    onPlain = await connectClient(plain.mcpUrl, owner.secret);
  });

  afterAll(async () => {
    await onSmall?.close();
    await onPlain?.close();
    await plain?.stop();
    await small?.stop();
  });

  it('refuses a text one byte over MCP_MAX_ANSWER_BYTES, naming the limit and the url form, and imports nothing', async () => {
    const result = await importText(onSmall, sized('over@example.com', LIMIT + 1));
    expect(result.isError).toBe(true);
    const message = textOf(result);
    expect(message).toContain(`${LIMIT + 1} bytes`);
    expect(message).toContain(`${LIMIT} bytes`);
    expect(message).toContain('MCP_MAX_ANSWER_BYTES');
    expect(message).toContain('url');
    expect(message).toMatch(/[Nn]othing was imported/);
    expect(message.split(/(?<=\.) /).length).toBe(1);
    expect(await summaries(onSmall)).toEqual([]);
  });

  it('imports a text of exactly MCP_MAX_ANSWER_BYTES', async () => {
    const result = await importText(onSmall, sized('exact@example.com', LIMIT));
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ imported: 1, updated: 0, skipped: 0, errors: [] });
    expect(await summaries(onSmall)).toEqual(['Sized exact@example.com']);
  });

  it('refuses a request body too large to read with a sentence naming the limit and the url form', async () => {
    // The body (1 MiB here, twice MCP_MAX_ANSWER_BYTES otherwise) is refused before any call is read.
    const refused = await importText(onSmall, sized('huge@example.com', 1024 * 1024 + 1)).then(
      () => '',
      (error: unknown) => String(error),
    );
    expect(refused).toContain('MCP_MAX_ANSWER_BYTES');
    expect(refused).toContain('{calendarId, url}');
    expect(refused).toMatch(/[Nn]othing was done/);
    expect(await summaries(onSmall)).not.toContain('Sized huge@example.com');
  });

  it('takes a text larger than an ordinary request body (2 MB) under the default 5 MB limit', async () => {
    const result = await importText(onPlain, sized('large@example.com', 2 * 1024 * 1024));
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ imported: 1, errors: [] });
    expect(await summaries(onPlain)).toContain('Sized large@example.com');
  });
});
