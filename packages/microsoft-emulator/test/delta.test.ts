import { describe, expect, it } from 'vitest';
import { type Loose, start } from './helpers.ts';

const W = 'W. Europe Standard Time';
const when = (dateTime: string) => ({ dateTime, timeZone: W });

async function drain(graph: Awaited<ReturnType<typeof start>>['graph'], url: string, pageSize = 2) {
  const items: Loose[] = [];
  const links: string[] = [];
  let next: string | undefined = url;
  let deltaLink = '';
  while (next) {
    const res = await graph(next, { headers: { prefer: `odata.maxpagesize=${pageSize}` } });
    expect(res.status).toBe(200);
    expect(res.body.value.length).toBeLessThanOrEqual(pageSize);
    items.push(...res.body.value);
    links.push(next);
    next = res.body['@odata.nextLink'];
    deltaLink = res.body['@odata.deltaLink'] ?? deltaLink;
  }
  return { items, links, deltaLink };
}

describe('calendarView/delta', () => {
  it('takes the window in the first request only, pages with $skiptoken, ends with a $deltatoken link', async () => {
    const { graph, calendarId } = await start();
    const cal = calendarId('Calendar');
    for (let day = 10; day < 15; day += 1) {
      await graph(`/me/calendars/${cal}/events`, {
        method: 'POST',
        body: {
          subject: `E${day}`,
          start: when(`2026-08-${day}T09:00:00`),
          end: when(`2026-08-${day}T10:00:00`),
        },
      });
    }
    const first = await drain(
      graph,
      `/me/calendars/${cal}/calendarView/delta?startDateTime=2026-08-01T00:00:00Z&endDateTime=2026-09-01T00:00:00Z`,
    );
    expect(first.items.map((e) => e.subject).sort()).toEqual(['E10', 'E11', 'E12', 'E13', 'E14']);
    // An empty first page with a next link, then 2 + 2 + 1.
    expect(first.links).toHaveLength(4);
    for (const link of first.links.slice(1)) {
      expect(link).toMatch(/\/calendarView\/delta\?\$skiptoken=[^&]+$/);
    }
    expect(first.deltaLink).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/v1\.0\/me\/calendars\/.+\/calendarView\/delta\?\$deltatoken=[^&]+$/,
    );

    const quiet = await drain(graph, first.deltaLink);
    expect(quiet.items).toEqual([]);
  });

  it('reports changes, new occurrences and @removed entries since the delta token', async () => {
    const { graph, calendarId } = await start();
    const cal = calendarId('Calendar');
    const made = await graph(`/me/calendars/${cal}/events`, {
      method: 'POST',
      body: { subject: 'Keep', start: when('2026-08-03T09:00:00'), end: when('2026-08-03T10:00:00') },
    });
    const doomed = await graph(`/me/calendars/${cal}/events`, {
      method: 'POST',
      body: { subject: 'Doomed', start: when('2026-08-04T09:00:00'), end: when('2026-08-04T10:00:00') },
    });
    const series = await graph(`/me/calendars/${cal}/events`, {
      method: 'POST',
      body: {
        subject: 'Daily',
        start: when('2026-08-05T08:00:00'),
        end: when('2026-08-05T08:30:00'),
        recurrence: {
          pattern: { type: 'daily', interval: 1 },
          range: { type: 'numbered', startDate: '2026-08-05', numberOfOccurrences: 3 },
        },
      },
    });
    const first = await drain(
      graph,
      `/me/calendars/${cal}/calendarView/delta?startDateTime=2026-08-01T00:00:00Z&endDateTime=2026-09-01T00:00:00Z`,
      10,
    );
    expect(first.items).toHaveLength(5);
    expect(first.items.some((e) => e.type === 'seriesMaster')).toBe(false);
    const secondDaily: Loose = first.items.find(
      (e) => e.subject === 'Daily' && e.start.dateTime.startsWith('2026-08-06'),
    );

    await graph(`/me/events/${made.body.id}`, { method: 'PATCH', body: { subject: 'Kept' } });
    await graph(`/me/events/${doomed.body.id}`, { method: 'DELETE' });
    await graph(`/me/events/${secondDaily.id}`, { method: 'DELETE' });
    await graph(`/me/calendars/${cal}/events`, {
      method: 'POST',
      body: { subject: 'New', start: when('2026-08-20T09:00:00'), end: when('2026-08-20T10:00:00') },
    });
    const second = await drain(graph, first.deltaLink, 10);
    const changed = second.items
      .filter((e) => !e['@removed'])
      .map((e) => e.subject)
      .sort();
    const removed = second.items.filter((e) => e['@removed']);
    expect(changed).toEqual(['Kept', 'New']);
    expect(removed.map((e) => e.id).sort()).toEqual([doomed.body.id, secondDaily.id].sort());
    expect(removed[0]?.['@removed']).toEqual({ reason: 'deleted' });
    expect(series.status).toBe(201);
  });

  it('answers 410 SyncStateNotFound for an expired or unknown delta token, so clients start over', async () => {
    const { graph, calendarId, emulator } = await start();
    const cal = calendarId('Calendar');
    const first = await drain(
      graph,
      `/me/calendars/${cal}/calendarView/delta?startDateTime=2026-08-01T00:00:00Z&endDateTime=2026-09-01T00:00:00Z`,
    );
    emulator.admin.expireDeltaTokens();
    const stale = await graph(first.deltaLink);
    expect(stale.status).toBe(410);
    expect(stale.body.error.code).toBe('SyncStateNotFound');
    const unknown = await graph(`/me/calendars/${cal}/calendarView/delta?$deltatoken=made-up`);
    expect(unknown.status).toBe(410);
    const again = await drain(
      graph,
      `/me/calendars/${cal}/calendarView/delta?startDateTime=2026-08-01T00:00:00Z&endDateTime=2026-09-01T00:00:00Z`,
    );
    expect(again.deltaLink).toContain('$deltatoken=');
  });
});
