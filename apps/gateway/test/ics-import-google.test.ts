/**
 * import_events into a mirrored Google calendar over MCP (the official SDK client), through the
 * Google emulator: every VEVENT keeps its UID as the event's iCalUID (events.import), a series'
 * override and EXDATE arrive, and importing again (changed) updates the same events, found by
 * iCalUID (one by one for a few UIDs, one listing of the calendar for many), never duplicating.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGoogleCalendarGateway, type TestEmulator } from './google-fixture.ts';
import { connectClient, HIGH_RATE_LIMITS, type TestGateway } from './harness.ts';
import {
  designReview,
  type ListedEvent,
  OFFSITE_2027,
  standupSeries,
  vcalendar,
  vevent,
} from './ics-import-fixture.ts';
import { callOk } from './tool-calls.ts';

const CLIENT = { clientId: 'calgate-import.apps.googleusercontent.com', clientSecret: 'import-secret' };
const ANN = 'ann@example.com';
const UIDS = ['offsite-2027@example.com', 'review-7@example.com', 'standup-series@example.com'];
/** Enough events that the UIDs are found with one listing of the calendar, not one by one. */
const many = (tag: string) =>
  Array.from({ length: 14 }, (_, i) =>
    vevent([
      `UID:talk-${i}@conference.example`,
      `DTSTART:202704${String(i + 1).padStart(2, '0')}T100000Z`,
      `DTEND:202704${String(i + 1).padStart(2, '0')}T110000Z`,
      `SUMMARY:Talk ${i}${tag}`,
    ]),
  );

describe('import_events into a mirrored Google calendar', () => {
  let emulator: TestEmulator;
  let gw: TestGateway;
  let client: Client;
  let calendarId = '';

  const call = (name: string, args: Record<string, unknown>) => callOk(client, name, args);
  /** Events (singles and masters, not cancelled) as Google holds them. */
  const stored = () =>
    emulator.admin
      .events(ANN)
      .filter((e) => e.recurringEventId === undefined && e.status !== 'cancelled') as {
      id: string;
      iCalUID: string;
      summary?: string;
    }[];

  beforeAll(async () => {
    const started = await startGoogleCalendarGateway({
      client: CLIENT,
      seed: { accounts: [{ email: ANN, timeZone: 'Europe/Berlin' }] },
      env: () => ({ ...HIGH_RATE_LIMITS, WORKER_IN_PROCESS: 'true', MIRROR_MAX_STALENESS: '2' }),
      tenant: 'Importer',
      connect: [{ email: ANN, access: 'write' }],
    });
    ({ emulator, gw } = started);
    const tenant = started.tenant;
    calendarId = started.calendars[ANN] as string;
    await gw.runtime.keys.setDefaults(tenant.tenantId, tenant.keyId, { toolsets: ['calendar', 'ics'] });
    gw.forgetKeys(tenant.tenantId);
    client = await connectClient(gw.mcpUrl, tenant.secret);
  });

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await emulator?.close();
  });

  it('imports singles and a series with an override and an EXDATE under their UIDs, then updates the same events', async () => {
    const first = await call('import_events', {
      calendarId,
      ics: vcalendar(designReview('Design review'), OFFSITE_2027, standupSeries('11')),
    });
    expect(first).toMatchObject({ imported: 3, updated: 0, skipped: 0, errors: [] });
    const before = stored();
    expect(before.map((e) => e.iCalUID).sort()).toEqual(UIDS);
    expect(emulator.admin.requests().filter((r) => r.op === 'events.import')).toHaveLength(3);

    const week = async () =>
      (
        await call('list_events', {
          calendarId,
          timeMin: '2027-03-01T00:00:00Z',
          timeMax: '2027-03-08T00:00:00Z',
          format: 'json',
        })
      ).events as ListedEvent[];
    const standups = (events: ListedEvent[]) =>
      events.filter((e) => e.summary?.startsWith('Standup')).map((e) => [e.summary, e.start.dateTime]);
    // The calendar's first sync may run alongside the import (the series before its moved
    // occurrence): read again within the mirror's bound until the week is whole.
    const imported = [
      ['Standup', '2027-03-01T09:00:00+01:00'],
      ['Standup (late)', '2027-03-02T11:00:00+01:00'],
      ['Standup', '2027-03-03T09:00:00+01:00'],
      ['Standup', '2027-03-05T09:00:00+01:00'],
    ];
    let shown = await week();
    for (let i = 0; i < 50 && JSON.stringify(standups(shown)) !== JSON.stringify(imported); i++) {
      await new Promise((r) => setTimeout(r, 200));
      shown = await week();
    }
    expect(standups(shown)).toEqual(imported);

    const second = await call('import_events', {
      calendarId,
      ics: vcalendar(designReview('Design review (room 4)'), OFFSITE_2027, standupSeries('12')),
    });
    expect(second).toMatchObject({ imported: 0, errors: [] });
    expect((second.updated as number) + (second.skipped as number)).toBe(3);
    const after = stored();
    expect(after.map((e) => e.id).sort()).toEqual(before.map((e) => e.id).sort());
    expect(after.map((e) => e.iCalUID).sort()).toEqual(UIDS);
    expect(after.find((e) => e.iCalUID === 'review-7@example.com')?.summary).toBe('Design review (room 4)');
    let listed = await week();
    for (let i = 0; i < 20 && standups(listed)[1]?.[1] !== '2027-03-02T12:00:00+01:00'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      listed = await week();
    }
    expect(standups(listed)).toEqual([
      ['Standup', '2027-03-01T09:00:00+01:00'],
      ['Standup (late)', '2027-03-02T12:00:00+01:00'],
      ['Standup', '2027-03-03T09:00:00+01:00'],
      ['Standup', '2027-03-05T09:00:00+01:00'],
    ]);
    expect(listed.filter((e) => e.summary?.startsWith('Design review'))).toHaveLength(1);
  });

  it('finds many UIDs with one listing of the calendar and updates them in place', async () => {
    const first = await call('import_events', { calendarId, ics: vcalendar(...many('')) });
    expect(first).toMatchObject({ imported: 14, updated: 0, errors: [] });
    const ids = stored()
      .filter((e) => e.iCalUID.endsWith('@conference.example'))
      .map((e) => e.id)
      .sort();
    expect(ids).toHaveLength(14);
    emulator.admin.clearRequests();
    const again = await call('import_events', { calendarId, ics: vcalendar(...many(' (slides)')) });
    expect(again).toMatchObject({ imported: 0, updated: 14, skipped: 0, errors: [] });
    // The mirror's own syncs may run meanwhile, full (showDeleted) or incremental (syncToken); the
    // import's look-ups carry neither.
    const lookups = emulator.admin
      .requests()
      .filter(
        (r) =>
          r.op === 'events.list' &&
          !(r.params ?? []).includes('syncToken') &&
          !(r.params ?? []).includes('showDeleted'),
      );
    expect(lookups).toHaveLength(1);
    const talks = stored().filter((e) => e.iCalUID.endsWith('@conference.example'));
    expect(talks.map((e) => e.id).sort()).toEqual(ids);
    expect(talks.every((e) => e.summary?.endsWith('(slides)'))).toBe(true);
  });
});
