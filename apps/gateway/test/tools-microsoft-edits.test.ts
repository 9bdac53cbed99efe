/**
 * Edits of Outlook events over MCP (Graph emulator, SDK client, a gateway whose worker keeps the
 * calendar in the mirror and whose reads come from it once synced): ids that differ only in
 * letter case are two events, declining an invitation (Outlook takes it off the calendar),
 * deleting a whole series, and an event changed in Outlook after the agent read it: update_event
 * writes on top of the latest version with Graph's If-Match, and a change that lands between
 * Calgate's read and its write is never overwritten (412 → Calgate's conflict, or the write
 * applied once more when it touches other fields).
 */

import { until } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, type TestGateway, textOf } from './harness.ts';
import {
  type ConnectedOutlook,
  connectOutlookAccount,
  startOutlookCalendarGateway,
  type TestMicrosoftEmulator,
} from './microsoft-fixture.ts';
import { testDays } from './test-days.ts';

const ANN = 'ann@contoso.com';
const ZED = 'zed@contoso.com';
/** A mailbox with Outlook's "Save declined events" on. */
const BEA = 'bea@contoso.com';
/** Two Graph ids with the same letters, in different case, and a third with no twin. */
const LOWER_ID = 'AAMkAGI2TG9va3NBbGlrZQBGAAAAAAD-caseCheck-abcdefAAA=';
const UPPER_ID = 'AAMkAGI2TG9va3NBbGlrZQBGAAAAAAD-CASECHECK-ABCDEFAAA=';
const LONE_ID = 'AAMkAGI2TG9uZUV2ZW50QBGAAAAAAD-OnlyOneCase-xyzAAA=';

const { at, date, outlookTimed: timed } = testDays(7);
const weekday = (days: number) =>
  ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'][
    new Date(`${date(days)}T00:00:00Z`).getUTCDay()
  ] as string;

interface EventOut {
  id: string;
  summary?: string;
  location?: string;
  etag?: string;
  recurringEventId?: string;
  attendees?: { email: string; responseStatus?: string }[];
}

describe('Outlook edits over MCP: case-sensitive ids, declining, series, concurrent edits', () => {
  let ms: TestMicrosoftEmulator;
  let gw: TestGateway;
  let client: Client;
  let outlook: ConnectedOutlook;
  let calendarId: string;
  let beaCalendar: string;
  let beaExternal: string;

  const callTool = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    return { isError: result.isError === true, text: textOf(result), out: result.structuredContent };
  };
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await callTool(name, args);
    expect(result.isError, `${name}: ${result.text}`).toBe(false);
    return result.out as Record<string, unknown>;
  };
  const refused = async (name: string, args: Record<string, unknown>) => {
    const result = await callTool(name, args);
    expect(result.isError, `${name} should fail: ${result.text}`).toBe(true);
    return result.text;
  };
  const list = async (day: number) =>
    (
      (await call('list_events', {
        calendarId,
        timeMin: at(day, 0),
        timeMax: at(day + 1, 0),
        format: 'json',
      })) as { events: EventOut[] }
    ).events;
  const getEvent = async (eventId: string) =>
    ((await call('get_event', { calendarId, eventId })) as { event: EventOut }).event;
  const inGraph = (id: string) =>
    ms.admin.events(outlook.externalIds.Calendar as string).find((event) => event.id === id);
  /** Someone changing the event in Outlook itself. */
  const editInOutlook = async (id: string, body: Record<string, unknown>) => {
    const response = await ms.editDirectly(ANN, 'PATCH', `/me/events/${encodeURIComponent(id)}`, body);
    expect(response.status).toBe(200);
  };
  /**
   * update_event retitles the third listed event while its PATCH is held at Graph for a second,
   * and `edit` is made in Outlook in that second: Calgate read the event before the edit and
   * writes after it.
   */
  const updateWhileOutlookEdits = async (edit: Record<string, unknown>) => {
    const [contested] = await list(3);
    const id = contested?.id as string;
    ms.admin.script({
      match: { op: 'events.update', method: 'PATCH' },
      times: 1,
      action: { kind: 'latency', ms: 1_000 },
    });
    const pending = callTool('update_event', { calendarId, eventId: id, summary: 'Agent title' });
    // The PATCH has reached Graph (and is held) once the scripted latency is taken.
    await until(() => ms.admin.pendingFaults().length === 0, 10_000, 10);
    await editInOutlook(id, edit);
    return { id, result: await pending };
  };

  beforeAll(async () => {
    const started = await startOutlookCalendarGateway({
      seed: {
        users: [
          {
            email: ANN,
            displayName: 'Ann Example',
            timeZone: 'UTC',
            calendars: [
              {
                name: 'Calendar',
                events: [
                  { ...timed('Lower-case twin', 0, 9, 10), id: LOWER_ID },
                  { ...timed('Upper-case twin', 0, 11, 12), id: UPPER_ID },
                  { ...timed('Only one', 0, 13, 14), id: LONE_ID },
                  timed('Invitation from Zed', 1, 9, 10, {
                    organizerAddress: ZED,
                    attendees: [
                      { emailAddress: { address: ZED, name: 'Zed' }, type: 'required' },
                      { emailAddress: { address: ANN, name: 'Ann Example' }, type: 'required' },
                    ],
                  }),
                  {
                    ...timed('Weekly sync', 2, 9, 9.5),
                    recurrence: {
                      pattern: {
                        type: 'weekly',
                        interval: 1,
                        daysOfWeek: [weekday(2)],
                        firstDayOfWeek: 'monday',
                      },
                      range: { type: 'numbered', startDate: date(2), numberOfOccurrences: 4 },
                    },
                  },
                  timed('Contested', 3, 9, 10, { location: { displayName: 'Room 1' } }),
                ],
              },
            ],
          },
          { email: ZED, displayName: 'Zed', timeZone: 'UTC', calendars: [{ name: 'Calendar' }] },
          {
            email: BEA,
            displayName: 'Bea',
            timeZone: 'UTC',
            preserveDeclinedMeetings: true,
            calendars: [
              {
                name: 'Bea',
                events: [
                  timed('Invitation Bea keeps', 1, 9, 10, {
                    organizerAddress: ZED,
                    attendees: [
                      { emailAddress: { address: ZED, name: 'Zed' }, type: 'required' },
                      { emailAddress: { address: BEA, name: 'Bea' }, type: 'required' },
                    ],
                  }),
                ],
              },
            ],
          },
        ],
      },
      env: { ...HIGH_RATE_LIMITS, WORKER_IN_PROCESS: 'true', MIRROR_MAX_STALENESS: '3600' },
      connect: { email: ANN, access: 'write' },
    });
    ({ ms, gw, outlook } = started);
    calendarId = outlook.calendars.Calendar as string;
    const bea = await connectOutlookAccount(
      gw,
      ms,
      started.tenant.tenantId,
      [started.tenant.keyId],
      BEA,
      'write',
    );
    beaCalendar = bea.calendars.Bea as string;
    beaExternal = bea.externalIds.Bea as string;
    client = await connectClient(gw.mcpUrl, started.tenant.secret);
    // The first read queues the first sync; reads come from the mirror once it is done.
    await until(
      async () =>
        (
          (await call('list_events', { calendarId, timeMin: at(0, 0), timeMax: at(1, 0) })) as {
            syncedAt?: string;
          }
        ).syncedAt !== undefined,
      20_000,
      200,
    );
  }, 60_000);

  afterEach(() => {
    ms.admin.clearFaults();
  });

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await ms?.close();
  });

  it('two events whose ids differ only in letter case stay two through list_events, get_event and update_event', async () => {
    expect((await list(0)).map((event) => [event.id, event.summary])).toEqual([
      [LOWER_ID, 'Lower-case twin'],
      [UPPER_ID, 'Upper-case twin'],
      [LONE_ID, 'Only one'],
    ]);
    expect((await getEvent(LOWER_ID)).summary).toBe('Lower-case twin');
    expect((await getEvent(UPPER_ID)).summary).toBe('Upper-case twin');
    const updated = (await call('update_event', {
      calendarId,
      eventId: UPPER_ID,
      summary: 'Upper renamed',
    })) as {
      eventId: string;
      event: EventOut;
    };
    expect(updated).toMatchObject({ eventId: UPPER_ID, event: { id: UPPER_ID, summary: 'Upper renamed' } });
    expect(inGraph(UPPER_ID)?.subject).toBe('Upper renamed');
    expect(inGraph(LOWER_ID)?.subject).toBe('Lower-case twin');
    expect((await getEvent(LOWER_ID)).summary).toBe('Lower-case twin');
    await call('update_event', { calendarId, eventId: LOWER_ID, location: 'Lower room' });
    expect(inGraph(LOWER_ID)?.location).toMatchObject({ displayName: 'Lower room' });
    expect((inGraph(UPPER_ID)?.location as { displayName?: string } | undefined)?.displayName ?? '').toBe('');
    // The mirror keeps them apart too.
    expect((await list(0)).map((event) => [event.id, event.summary, event.location])).toEqual([
      [LOWER_ID, 'Lower-case twin', 'Lower room'],
      [UPPER_ID, 'Upper renamed', undefined],
      [LONE_ID, 'Only one', undefined],
    ]);
  });

  it('an id in another letter case names no event: get_event and update_event say not found and change nothing', async () => {
    const swapped = LONE_ID.replace(/[a-zA-Z]/g, (c) =>
      c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase(),
    );
    expect(swapped.toLowerCase()).toBe(LONE_ID.toLowerCase());
    const requests = ms.admin.requests({ op: 'events.update' }).length;
    for (const [name, args] of [
      ['get_event', { calendarId, eventId: swapped }],
      ['update_event', { calendarId, eventId: swapped, summary: 'Hijacked' }],
    ] as const) {
      expect(await refused(name, args)).toMatch(/not found/i);
    }
    expect(ms.admin.requests({ op: 'events.update' })).toHaveLength(requests);
    expect(inGraph(LONE_ID)?.subject).toBe('Only one');
  });

  it("respond_to_event declined goes through Graph's /decline, which takes the invitation off the calendar; the answer says so", async () => {
    const [invitation] = await list(1);
    expect(invitation?.summary).toBe('Invitation from Zed');
    const id = invitation?.id as string;
    const answered = await callTool('respond_to_event', {
      calendarId,
      eventId: id,
      response: 'declined',
      comment: 'Travelling',
    });
    expect(answered.isError, answered.text).toBe(false);
    expect(ms.admin.requests({ op: 'events.decline' }).map((r) => r.status)).toEqual([202]);
    expect(inGraph(id)).toBeUndefined();
    expect(answered.out).toMatchObject({ eventId: id, attendee: ANN, response: 'declined' });
    // Listings agree at once (the mirror dropped it), and the event is not found any more.
    expect((await list(1)).map((event) => event.summary)).toEqual([]);
    expect(await refused('get_event', { calendarId, eventId: id })).toMatch(/not found/i);
    expect(answered.text.split('\n')[0]).toBe(
      'Declined; the calendar took the invitation off (Outlook does unless the mailbox saves declined events): it is no longer listed, and get_event no longer finds it.',
    );
    expect(answered.out).toMatchObject({ event: { status: 'cancelled' } });
  });

  it('declined in a mailbox that saves declined events: the invitation stays, shown as free, and the answer says nothing more', async () => {
    const listed = (await call('list_events', {
      calendarId: beaCalendar,
      timeMin: at(1, 0),
      timeMax: at(2, 0),
      format: 'json',
    })) as { events: EventOut[] };
    const id = listed.events[0]?.id as string;
    const answered = await callTool('respond_to_event', {
      calendarId: beaCalendar,
      eventId: id,
      response: 'declined',
    });
    expect(answered.isError, answered.text).toBe(false);
    expect(answered.text.startsWith('{')).toBe(true);
    expect(answered.out).toMatchObject({
      attendee: BEA,
      response: 'declined',
      event: { id, status: 'confirmed', transparency: 'transparent' },
    });
    expect(ms.admin.events(beaExternal).find((event) => event.id === id)).toMatchObject({
      showAs: 'free',
      responseStatus: { response: 'declined' },
    });
  });

  it('delete_event with scope all from an occurrence deletes the whole series at Graph', async () => {
    const occurrences = async () => {
      const found: EventOut[] = [];
      for (const week of [0, 1, 2, 3]) {
        found.push(...(await list(2 + 7 * week)).filter((event) => event.summary === 'Weekly sync'));
      }
      return found;
    };
    const before = await occurrences();
    expect(before).toHaveLength(4);
    const masterId = before[0]?.recurringEventId as string;
    expect(masterId).toEqual(expect.any(String));
    const deleted = await call('delete_event', { calendarId, eventId: before[2]?.id, scope: 'all' });
    expect(deleted).toMatchObject({ deleted: true, scope: 'all' });
    expect(
      ms.admin
        .requests({ op: 'events.delete' })
        .filter((r) => r.status === 204)
        .map((r) => decodeURIComponent(r.path.split('/').at(-1) ?? '')),
    ).toEqual([masterId]);
    expect(inGraph(masterId)).toBeUndefined();
    expect(await occurrences()).toEqual([]);
  });

  it('an event changed in Outlook after the agent read it: update_event writes on top of the latest version, keeping the other edit', async () => {
    const [contested] = await list(3);
    const id = contested?.id as string;
    const read = await getEvent(id);
    expect(read).toMatchObject({ summary: 'Contested', location: 'Room 1', etag: expect.any(String) });
    await editInOutlook(id, { subject: 'Contested (edited in Outlook)' });
    const updated = (await call('update_event', { calendarId, eventId: id, location: 'Room 2' })) as {
      event: EventOut;
    };
    expect(updated.event).toMatchObject({ summary: 'Contested (edited in Outlook)', location: 'Room 2' });
    expect(updated.event.etag).not.toBe(read.etag);
    expect(inGraph(id)).toMatchObject({
      subject: 'Contested (edited in Outlook)',
      location: { displayName: 'Room 2' },
    });
    // Graph was asked with If-Match, and agreed: no 412 on this write.
    expect(ms.admin.requests({ op: 'events.update' }).filter((r) => r.status === 412)).toEqual([]);
  });

  it("the same field changed in Outlook between Calgate's read and its write: Graph answers 412 and Calgate says so, overwriting nothing", async () => {
    const { id, result } = await updateWhileOutlookEdits({ subject: 'Outlook title' });
    expect(result.isError).toBe(true);
    expect(result.text).toBe(
      `Event '${id}' was changed by someone else while this update was being applied (summary changed). Nothing was overwritten; read the event again and decide on the change.`,
    );
    expect(
      ms.admin
        .requests({ op: 'events.update' })
        .map((r) => r.status)
        .slice(-2),
    ).toEqual([200, 412]);
    expect(inGraph(id)?.subject).toBe('Outlook title');
    expect((await getEvent(id)).summary).toBe('Outlook title');
  });

  it("another field changed in Outlook between Calgate's read and its write: the write is applied once more on the newer version", async () => {
    const { id, result } = await updateWhileOutlookEdits({ location: { displayName: 'Room 3' } });
    expect(result.isError, result.text).toBe(false);
    expect((result.out as { event: EventOut }).event).toMatchObject({
      summary: 'Agent title',
      location: 'Room 3',
    });
    expect(
      ms.admin
        .requests({ op: 'events.update' })
        .map((r) => r.status)
        .slice(-3),
    ).toEqual([200, 412, 200]);
    expect(inGraph(id)).toMatchObject({ subject: 'Agent title', location: { displayName: 'Room 3' } });
  });
});
