/**
 * Outlook calendars kept in the event mirror through calendarView/delta, end to end over HTTP
 * with the MCP SDK client: the first full sync (the window only in the first request, then the
 * next links), incremental syncs from the delta link (`@removed` entries, cancelled occurrences),
 * a delta token Graph no longer knows starting a full sync over, and reads answered from the
 * mirror exactly as Graph answers them.
 *
 * Two gateways share one database: `gw` syncs (its worker runs in process) and reads with a
 * 2-second staleness bound; `direct` has MIRROR_READS=false and answers every read from Graph.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, type TestGateway } from './harness.ts';
import {
  type ConnectedOutlook,
  connectOutlookAccount,
  startTestMicrosoftEmulator,
  type TestMicrosoftEmulator,
} from './microsoft-fixture.ts';
import { startMirroredAndDirect } from './mirror-gateways.ts';
import { testDays } from './test-days.ts';
import { callOk } from './tool-calls.ts';

const ANN = 'ann@contoso.com';
const STALENESS_S = 2;

const { at, date, wall, outlookTimed: timed } = testDays(7);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface EventOut {
  id: string;
  summary?: string;
  start: { dateTime?: string; date?: string };
  end: { dateTime?: string; date?: string };
  [key: string]: unknown;
}
interface Listing {
  events: EventOut[];
  nextPageToken?: string;
  syncedAt?: string;
}

describe('Outlook calendars in the event mirror (calendarView/delta)', () => {
  let ms: TestMicrosoftEmulator;
  let gw: TestGateway;
  let direct: TestGateway;
  let viaMirror: Client;
  let viaGraph: Client;
  let outlook: ConnectedOutlook;
  let calendarId: string;
  const window = { timeMin: at(-1, 0), timeMax: at(30, 0) };

  const call = callOk;
  const listAll = async (client: Client, args: Record<string, unknown>) => {
    const events: EventOut[] = [];
    let pageToken: string | undefined;
    let syncedAt: string | undefined;
    do {
      const page = (await call(client, 'list_events', {
        format: 'json',
        timeZone: 'UTC',
        calendarId,
        ...args,
        ...(pageToken === undefined ? {} : { pageToken }),
      })) as unknown as Listing;
      events.push(...page.events);
      syncedAt ??= page.syncedAt;
      pageToken = page.nextPageToken;
    } while (pageToken !== undefined);
    return { events, syncedAt };
  };
  const shape = (events: EventOut[]) =>
    events.map((e) => ({ id: e.id, summary: e.summary, start: e.start, end: e.end }));
  const deltas = () => ms.admin.requests().filter((r) => r.op === 'calendarView.delta');
  /** Reads through the mirror until `done` holds (each read past the staleness bound syncs first). */
  const eventually = async (done: (events: EventOut[]) => boolean) => {
    const until = Date.now() + 20_000;
    for (;;) {
      const { events, syncedAt } = await listAll(viaMirror, window);
      if (syncedAt !== undefined && done(events)) {
        return events;
      }
      if (Date.now() > until) {
        throw new Error(`the mirror did not catch up: ${JSON.stringify(shape(events))}`);
      }
      await sleep(300);
    }
  };

  beforeAll(async () => {
    ms = await startTestMicrosoftEmulator({
      users: [
        {
          email: ANN,
          timeZone: 'W. Europe Standard Time',
          calendars: [
            {
              name: 'Calendar',
              events: [
                timed('Planning', 0, 9, 10, { body: { contentType: 'text', content: 'Roadmap' } }),
                {
                  ...timed('Standup', 1, 9, 9.5),
                  recurrence: {
                    pattern: { type: 'daily', interval: 1 },
                    range: { type: 'numbered', startDate: date(1), numberOfOccurrences: 12 },
                  },
                  deletedOccurrences: [`${date(3)}T09:00:00`],
                  cancelledOccurrences: [`${date(4)}T09:00:00`],
                },
                {
                  subject: 'Offsite',
                  isAllDay: true,
                  start: { dateTime: `${date(5)}T00:00:00`, timeZone: 'W. Europe Standard Time' },
                  end: { dateTime: `${date(7)}T00:00:00`, timeZone: 'W. Europe Standard Time' },
                },
                timed('Lunch', 2, 12, 13, { showAs: 'free' }),
              ],
            },
          ],
        },
      ],
    });
    const env = { ...ms.env, ...HIGH_RATE_LIMITS, MIRROR_SYNC_PAGE_SIZE: '5' };
    ({ gw, direct } = await startMirroredAndDirect(env, {
      MIRROR_MAX_STALENESS: String(STALENESS_S),
      MIRROR_POLL_INTERVAL: '3600',
    }));
    const tenant = await gw.seedTenant('Acme');
    outlook = await connectOutlookAccount(gw, ms, tenant.tenantId, [tenant.keyId], ANN, 'write');
    direct.forgetKeys(tenant.tenantId);
    calendarId = outlook.calendars.Calendar as string;
    viaMirror = await connectClient(gw.mcpUrl, tenant.secret);
    viaGraph = await connectClient(direct.mcpUrl, tenant.secret);
    // The first read finds no mirror yet: Graph answers and the first sync is queued for the worker.
    const first = await listAll(viaMirror, window);
    expect(first.syncedAt).toBeUndefined();
    await eventually(() => true);
  }, 60_000);

  afterAll(async () => {
    await viaMirror?.close();
    await viaGraph?.close();
    await direct?.stop();
    await gw?.stop();
    await ms?.close();
  });

  it('the first sync puts the window in the first delta request only, then follows next links', () => {
    const full = deltas().filter(
      (r) => r.calendarId === outlook.externalIds.Calendar || r.path.includes('delta'),
    );
    const [first, ...rest] = full;
    expect(first?.query).toMatch(/startDateTime=.*endDateTime=/);
    expect(rest.length).toBeGreaterThan(1);
    expect(
      rest.every((r) => !/startDateTime/.test(r.query) && /\$(skiptoken|deltatoken)=/.test(r.query)),
    ).toBe(true);
  });

  it('answers from the mirror exactly as Graph answers: occurrences, cancelled hidden, deleted gone, all-day dates', async () => {
    const mirrored = await listAll(viaMirror, window);
    const graph = await listAll(viaGraph, window);
    expect(mirrored.syncedAt).toEqual(expect.any(String));
    expect(graph.syncedAt).toBeUndefined();
    expect(shape(mirrored.events)).toEqual(shape(graph.events));
    const standups = mirrored.events.filter((e) => e.summary === 'Standup').map((e) => e.start.dateTime);
    expect(standups).toHaveLength(10);
    expect(standups).not.toContain(at(3, 9));
    expect(standups).not.toContain(at(4, 9));
    expect(mirrored.events.find((e) => e.summary === 'Offsite')?.start).toEqual({ date: date(5) });
    // Pages of two answer the same, from the mirror.
    const paged = await listAll(viaMirror, { ...window, maxResults: 2 });
    expect(shape(paged.events)).toEqual(shape(graph.events));
  });

  it('an incremental sync from the delta link brings Outlook changes: new, changed, @removed, cancelled', async () => {
    const before = deltas().length;
    const planning = (await listAll(viaGraph, window)).events.find(
      (e) => e.summary === 'Planning',
    ) as EventOut;
    const lunch = (await listAll(viaGraph, window)).events.find((e) => e.summary === 'Lunch') as EventOut;
    const standup = (await listAll(viaGraph, window)).events.find(
      (e) => e.summary === 'Standup' && e.start.dateTime === at(6, 9),
    ) as EventOut;
    const created = await ms.editDirectly(
      ANN,
      'POST',
      `/me/calendars/${outlook.externalIds.Calendar}/events`,
      {
        subject: 'Added in Outlook',
        start: wall(8, 15),
        end: wall(8, 16),
      },
    );
    expect(created.status).toBe(201);
    expect(
      (await ms.editDirectly(ANN, 'PATCH', `/me/events/${planning.id}`, { subject: 'Planning (renamed)' }))
        .status,
    ).toBe(200);
    expect((await ms.editDirectly(ANN, 'DELETE', `/me/events/${lunch.id}`)).status).toBe(204);
    ms.admin.cancelOccurrence(outlook.externalIds.Calendar as string, standup.id);
    const events = await eventually(
      (list) =>
        list.some((e) => e.summary === 'Added in Outlook') &&
        list.some((e) => e.summary === 'Planning (renamed)') &&
        !list.some((e) => e.summary === 'Lunch') &&
        !list.some((e) => e.start.dateTime === at(6, 9)),
    );
    expect(shape(events)).toEqual(shape((await listAll(viaGraph, window)).events));
    const incremental = deltas().slice(before);
    expect(incremental.length).toBeGreaterThan(0);
    expect(incremental.every((r) => /\$deltatoken=|\$skiptoken=/.test(r.query))).toBe(true);
    expect(incremental.some((r) => /startDateTime/.test(r.query))).toBe(false);
  });

  it('a delta token Graph no longer knows (410 SyncStateNotFound) starts a full sync over', async () => {
    const before = deltas().length;
    ms.admin.expireDeltaTokens();
    const added = await ms.editDirectly(ANN, 'POST', `/me/calendars/${outlook.externalIds.Calendar}/events`, {
      subject: 'After expiry',
      start: wall(9, 10),
      end: wall(9, 11),
    });
    expect(added.status).toBe(201);
    const events = await eventually((list) => list.some((e) => e.summary === 'After expiry'));
    expect(shape(events)).toEqual(shape((await listAll(viaGraph, window)).events));
    const after = deltas().slice(before);
    expect(after.some((r) => r.status === 410)).toBe(true);
    expect(after.some((r) => r.status === 200 && /startDateTime/.test(r.query))).toBe(true);
  });

  it('writes through Calgate read back from the mirror as Graph has them: a series, one occurrence deleted, the series changed', async () => {
    const created = await call(viaMirror, 'create_event', {
      calendarId,
      summary: 'Written series',
      start: { dateTime: at(10, 15) },
      end: { dateTime: at(10, 16) },
      recurrence: ['RRULE:FREQ=DAILY;COUNT=3'],
    });
    const seriesId = created.eventId as string;
    const occurrences = (await listAll(viaGraph, window)).events.filter(
      (e) => e.recurringEventId === seriesId,
    );
    expect(occurrences).toHaveLength(3);
    await call(viaMirror, 'delete_event', { calendarId, eventId: occurrences[1]?.id });
    await call(viaMirror, 'update_event', { calendarId, eventId: seriesId, location: 'Attic' });
    const graph = await listAll(viaGraph, window);
    const mirrored = await listAll(viaMirror, window);
    expect(mirrored.syncedAt).toEqual(expect.any(String));
    const written = (events: EventOut[]) =>
      shape(events.filter((e) => e.summary === 'Written series')).map(({ summary, start, end }) => ({
        summary,
        start,
        end,
      }));
    expect(written(mirrored.events)).toEqual(written(graph.events));
    expect(written(mirrored.events)).toHaveLength(2);
  });

  it('search_events reads the mirror', async () => {
    const found = (await call(viaMirror, 'search_events', {
      query: 'roadmap',
      ...window,
      format: 'json',
    })) as { events: EventOut[] };
    expect(found.events.map((e) => e.summary)).toEqual(['Planning (renamed)']);
  });

  it('a window outside what the mirror keeps is read from Graph', async () => {
    const far = { timeMin: at(2000, 0), timeMax: at(2001, 0) };
    const before = ms.admin.requests().filter((r) => r.op === 'calendarView.list').length;
    const listing = await listAll(viaMirror, far);
    expect(listing.syncedAt).toBeUndefined();
    expect(ms.admin.requests().filter((r) => r.op === 'calendarView.list').length).toBeGreaterThan(before);
  });
});
