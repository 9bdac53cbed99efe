/**
 * Single-value extended properties as Graph keeps them on events: written in a create or an
 * update, absent from reads unless `$expand`ed, found with `$filter=…/Any(…)`, the id answered
 * with the GUID in lower case, the value matched without regard to case.
 */
import { describe, expect, it } from 'vitest';
import { start } from './helpers.ts';

const PROPERTY = 'String {00020329-0000-0000-C000-000000000046} Name Calgate.iCalUID';
const ANSWERED = 'String {00020329-0000-0000-c000-000000000046} Name Calgate.iCalUID';
const when = (dateTime: string) => ({ dateTime, timeZone: 'UTC' });
const expand = `singleValueExtendedProperties($filter=id eq '${PROPERTY}')`;
const filter = (value: string) =>
  `singleValueExtendedProperties/Any(ep: ep/id eq '${PROPERTY}' and ep/value eq '${value.replace(/'/g, "''")}')`;
const q = (params: Record<string, string>) => `?${new URLSearchParams(params)}`;

describe('single-value extended properties', () => {
  it('are written on create and update, read only when expanded, and found by value', async () => {
    const { graph, calendarId } = await start();
    const cal = calendarId('Calendar');
    const create = (subject: string, uid: string) =>
      graph(`/me/calendars/${cal}/events`, {
        method: 'POST',
        body: {
          subject,
          start: when('2026-07-01T10:00:00'),
          end: when('2026-07-01T11:00:00'),
          singleValueExtendedProperties: [{ id: PROPERTY, value: uid }],
        },
      });
    const first = await create('First', "o'brien-1@example.com");
    expect(first.status).toBe(201);
    expect(first.body.singleValueExtendedProperties).toBeUndefined();
    const second = await create('Second', 'second@example.com');
    await graph(`/me/calendars/${cal}/events`, {
      method: 'POST',
      body: { subject: 'Plain', start: when('2026-07-02T10:00:00'), end: when('2026-07-02T11:00:00') },
    });

    const read = await graph(`/me/events/${first.body.id}${q({ $expand: expand })}`);
    expect(read.body.singleValueExtendedProperties).toEqual([
      { id: ANSWERED, value: "o'brien-1@example.com" },
    ]);
    expect((await graph(`/me/events/${first.body.id}`)).body.singleValueExtendedProperties).toBeUndefined();

    const found = await graph(
      `/me/calendars/${cal}/events${q({ $filter: filter("O'BRIEN-1@example.com"), $select: 'id', $expand: expand })}`,
    );
    expect(found.status).toBe(200);
    expect(found.body.value).toEqual([
      {
        '@odata.etag': first.body['@odata.etag'],
        id: first.body.id,
        singleValueExtendedProperties: [{ id: ANSWERED, value: "o'brien-1@example.com" }],
      },
    ]);

    // Listed with the property expanded: only the events that carry it show it.
    const all = await graph(`/me/calendars/${cal}/events${q({ $select: 'id,subject', $expand: expand })}`);
    expect(
      all.body.value.map((e: { subject: string; singleValueExtendedProperties?: unknown[] }) => [
        e.subject,
        e.singleValueExtendedProperties?.length ?? 0,
      ]),
    ).toEqual([
      ['First', 1],
      ['Second', 1],
      ['Plain', 0],
    ]);

    const patched = await graph(`/me/events/${second.body.id}`, {
      method: 'PATCH',
      body: { singleValueExtendedProperties: [{ id: PROPERTY, value: 'renamed@example.com' }] },
    });
    expect(patched.status).toBe(200);
    expect(
      (await graph(`/me/calendars/${cal}/events${q({ $filter: filter('second@example.com') })}`)).body.value,
    ).toEqual([]);
    const renamed = await graph(
      `/me/calendars/${cal}/events${q({ $filter: filter('renamed@example.com') })}`,
    );
    expect(renamed.body.value.map((e: { subject: string }) => e.subject)).toEqual(['Second']);
  });

  it('refuses a malformed property id and an expansion it does not know', async () => {
    const { graph, calendarId } = await start();
    const cal = calendarId('Calendar');
    const bad = await graph(`/me/calendars/${cal}/events`, {
      method: 'POST',
      body: {
        subject: 'Bad',
        start: when('2026-07-01T10:00:00'),
        end: when('2026-07-01T11:00:00'),
        singleValueExtendedProperties: [{ id: 'Calgate UID', value: 'x' }],
      },
    });
    expect(bad.status).toBe(400);
    const unknown = await graph(`/me/calendars/${cal}/events${q({ $expand: 'nothingHere' })}`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toMatch(/Could not find a property named 'nothingHere'/);
  });
});
