/**
 * import_events of files larger than one write batch, over MCP with the official SDK client:
 * overrides written at the end of the file, far from their series, still change that series;
 * importing again updates and never duplicates; a feed delivered in small pieces (lines and
 * multi-byte characters cut between them) answers exactly as the same text given as `ics`; a
 * feed broken past its first thousands of lines is refused and nothing changes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

const CRLF = '\r\n';
const EVENTS = 600;
const BASE = Date.parse('2026-01-05T08:00:00Z');

const stamp = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, '');

/**
 * EVENTS events an hour apart, every 100th a daily series of 3; the series' overrides (the
 * second day moved two hours later, the first series' third day cancelled) stand at the end.
 */
function file(change: (i: number) => string[] = () => []): string {
  const lines = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Test//EN'];
  for (let i = 0; i < EVENTS; i++) {
    const start = BASE + i * 3_600_000;
    lines.push(
      'BEGIN:VEVENT',
      `UID:stream-${i}@example.com`,
      'DTSTAMP:20260101T000000Z',
      `DTSTART;TZID=Europe/Berlin:${stamp(start)}`,
      `DTEND;TZID=Europe/Berlin:${stamp(start + 1_800_000)}`,
      `SUMMARY:Réunion ${i} — café`,
      ...(i % 100 === 0 ? ['RRULE:FREQ=DAILY;COUNT=3'] : []),
      ...change(i),
      'END:VEVENT',
    );
  }
  for (let i = 0; i < EVENTS; i += 100) {
    const day = BASE + i * 3_600_000 + 86_400_000;
    lines.push(
      'BEGIN:VEVENT',
      `UID:stream-${i}@example.com`,
      'DTSTAMP:20260101T000000Z',
      `RECURRENCE-ID;TZID=Europe/Berlin:${stamp(day)}`,
      `DTSTART;TZID=Europe/Berlin:${stamp(day + 7_200_000)}`,
      `DTEND;TZID=Europe/Berlin:${stamp(day + 9_000_000)}`,
      `SUMMARY:Réunion ${i} — café (moved)`,
      'END:VEVENT',
    );
  }
  lines.push(
    'BEGIN:VEVENT',
    'UID:stream-0@example.com',
    'DTSTAMP:20260101T000000Z',
    `RECURRENCE-ID;TZID=Europe/Berlin:${stamp(BASE + 2 * 86_400_000)}`,
    `DTSTART;TZID=Europe/Berlin:${stamp(BASE + 2 * 86_400_000)}`,
    `DTEND;TZID=Europe/Berlin:${stamp(BASE + 2 * 86_400_000 + 1_800_000)}`,
    'STATUS:CANCELLED',
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  );
  return lines.join(CRLF);
}

interface Listed {
  events: { summary?: string; start: { dateTime?: string }; location?: string }[];
}

describe('import_events of a file larger than a batch', () => {
  let gw: TestGateway;
  let client: Client;
  let fromText = '';
  let fromFeed = '';
  let feed: Server;
  let feedBase = '';
  let feedBody = '';

  beforeAll(async () => {
    gw = await startTestGateway({ ...HIGH_RATE_LIMITS, OUTBOUND_ALLOW_PRIVATE: 'true' });
    const owner = await gw.seedTenant('Streamer');
    fromText = await gw.localCalendar(owner.tenantId, 'From text', 'Europe/Berlin');
    fromFeed = await gw.localCalendar(owner.tenantId, 'From feed', 'Europe/Berlin');
    for (const calendar of [fromText, fromFeed]) {
      await gw.grant(owner.tenantId, owner.keyId, calendar, { read: true, write: true });
    }
    await gw.runtime.keys.setDefaults(owner.tenantId, owner.keyId, { toolsets: ['calendar', 'ics'] });
    client = await connectClient(gw.mcpUrl, owner.secret);
    // Pieces of 997 bytes: lines, CRLFs and the two-byte 'é' and three-byte '—' are cut between them.
    feed = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/calendar; charset=utf-8' });
      const bytes = Buffer.from(feedBody, 'utf8');
      let at = 0;
      const next = () => {
        while (at < bytes.length) {
          const piece = bytes.subarray(at, at + 997);
          at += 997;
          if (!response.write(piece)) {
            response.once('drain', next);
            return;
          }
        }
        response.end();
      };
      next();
    });
    await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
    feedBase = `http://127.0.0.1:${(feed.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await client?.close();
    await new Promise<void>((resolve) => feed?.close(() => resolve()));
    await gw?.stop();
  });

  async function importInto(calendarId: string, args: Record<string, unknown>) {
    const result = await client.callTool({ name: 'import_events', arguments: { calendarId, ...args } });
    expect(result.isError, textOf(result)).toBeFalsy();
    return result.structuredContent as Record<string, unknown>;
  }

  // Every page of the window (answers stop at 25,000 tokens, so 600 events take several).
  async function listing(calendarId: string): Promise<Listed['events']> {
    const events: Listed['events'] = [];
    let pageToken: string | undefined;
    do {
      const result = await client.callTool({
        name: 'list_events',
        arguments: {
          calendarId,
          timeMin: '2026-01-01T00:00:00Z',
          timeMax: '2026-03-01T00:00:00Z',
          timeZone: 'Europe/Berlin',
          maxResults: 2500,
          ...(pageToken === undefined ? {} : { pageToken }),
        },
      });
      expect(result.isError, textOf(result)).toBeFalsy();
      const page = result.structuredContent as unknown as Listed & { nextPageToken?: string };
      events.push(...page.events);
      pageToken = page.nextPageToken;
    } while (pageToken !== undefined);
    return events;
  }

  function count(events: Listed['events']): Map<string, number> {
    const counts = new Map<string, number>();
    for (const event of events) {
      counts.set(event.summary ?? '', (counts.get(event.summary ?? '') ?? 0) + 1);
    }
    return counts;
  }

  it('imports every event; overrides at the end of the file change their series', async () => {
    const answer = await importInto(fromText, { ics: file() });
    expect(answer).toMatchObject({ imported: EVENTS, updated: 0, skipped: 0, errors: [] });
    const events = await listing(fromText);
    // 594 single events, 6 series of 3 with the first one's third day cancelled.
    expect(events).toHaveLength(EVENTS - 6 + 6 * 3 - 1);
    const counts = count(events);
    expect(counts.get('Réunion 1 — café')).toBe(1);
    expect(counts.get('Réunion 0 — café')).toBe(1);
    expect(counts.get('Réunion 0 — café (moved)')).toBe(1);
    expect(counts.get('Réunion 500 — café')).toBe(2);
    const moved = events.find((event) => event.summary === 'Réunion 500 — café (moved)');
    // Event 500 starts 2026-01-26T04:00 in Berlin; its second day is moved two hours later.
    expect(moved?.start.dateTime).toBe('2026-01-27T06:00:00+01:00');
  });

  it('importing the same file again updates the series and skips the rest, never duplicating', async () => {
    const again = await importInto(fromText, { ics: file() });
    expect(again).toMatchObject({ imported: 0, updated: 6, skipped: EVENTS - 6, errors: [] });
    const changed = await importInto(fromText, {
      ics: file((i) => (i === 333 ? ['LOCATION:Lisbon'] : [])),
    });
    expect(changed).toMatchObject({ imported: 0, updated: 7, skipped: EVENTS - 7, errors: [] });
    const events = await listing(fromText);
    expect(events).toHaveLength(EVENTS - 6 + 6 * 3 - 1);
    expect([...count(events).values()].every((n) => n <= 2)).toBe(true);
    expect(events.find((event) => event.summary === 'Réunion 333 — café')?.location).toBe('Lisbon');
  });

  it('a feed delivered in small pieces answers as the same text does, and lists the same events', async () => {
    feedBody = file();
    const first = await importInto(fromFeed, { url: `${feedBase}/big.ics` });
    expect(first).toMatchObject({ imported: EVENTS, updated: 0, skipped: 0, errors: [] });
    const again = await importInto(fromFeed, { url: `${feedBase}/big.ics` });
    expect(again).toMatchObject({ imported: 0, updated: 6, skipped: EVENTS - 6, errors: [] });
    // Events starting at the same time come in id order, which differs between calendars.
    const strip = (events: Listed['events']) =>
      events.map(({ summary, start }) => `${start.dateTime} ${summary}`).sort();
    expect(strip(await listing(fromFeed))).toEqual(strip(await listing(fromText)));
  });

  it('a feed broken deep inside, or cut off in an event, is refused and nothing changes', async () => {
    const before = await listing(fromFeed);
    const lines = file((i) => (i === 444 ? ['LOCATION:Changed'] : [])).split(CRLF);
    const broken = [...lines.slice(0, 4000), 'this line is no property', ...lines.slice(4000)].join(CRLF);
    const cut = lines.slice(0, 4003).join(CRLF);
    for (const [body, message] of [
      [broken, /could not be read \(line 4001 is not a property/],
      [cut, /could not be read \(VEVENT began but did not end\)/],
    ] as const) {
      feedBody = body;
      const result = await client.callTool({
        name: 'import_events',
        arguments: { calendarId: fromFeed, url: `${feedBase}/broken.ics` },
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(message);
      const text = await client.callTool({
        name: 'import_events',
        arguments: { calendarId: fromFeed, ics: body },
      });
      expect(text.isError).toBe(true);
      expect(textOf(text)).toMatch(message);
    }
    expect(await listing(fromFeed)).toEqual(before);
  });
});
