/**
 * The mailbox's own answer to an invitation: seeded (on a series and on one occurrence), rendered
 * as `responseStatus`, left out of getSchedule when declined (free time, whatever `showAs` says),
 * and what declining does to the event: deleted, or kept as free when the mailbox saves declined
 * events (Outlook's PreserveDeclinedMeetings).
 */
import { describe, expect, it } from 'vitest';
import { ALICE, baseSeed, type MicrosoftSeed, start } from './helpers.ts';

const W = 'W. Europe Standard Time';
const when = (dateTime: string, timeZone = W) => ({ dateTime, timeZone });
const ORGANIZER = 'zed@example.org';

function invitations(preserve = false): MicrosoftSeed {
  const seed = baseSeed();
  const user = seed.users?.[0];
  const calendar = user?.calendars?.[0];
  if (user && calendar) {
    user.preserveDeclinedMeetings = preserve;
    calendar.events = [
      {
        subject: 'Declined sync',
        organizerAddress: ORGANIZER,
        responseStatus: { response: 'declined', time: '2026-03-01T08:00:00Z' },
        showAs: 'busy',
        start: when('2026-03-24T09:00:00'),
        end: when('2026-03-24T10:00:00'),
      },
      {
        subject: 'Accepted review',
        organizerAddress: ORGANIZER,
        responseStatus: { response: 'accepted' },
        start: when('2026-03-24T10:00:00'),
        end: when('2026-03-24T11:00:00'),
      },
      {
        subject: 'Weekly',
        organizerAddress: ORGANIZER,
        responseStatus: { response: 'accepted' },
        start: when('2026-03-24T13:00:00'),
        end: when('2026-03-24T14:00:00'),
        recurrence: {
          pattern: { type: 'daily', interval: 1 },
          range: { type: 'numbered', startDate: '2026-03-24', numberOfOccurrences: 2 },
        },
        exceptions: [{ originalStart: '2026-03-25T13:00:00', responseStatus: { response: 'declined' } }],
      },
      {
        subject: 'Open invitation',
        organizerAddress: ORGANIZER,
        start: when('2026-03-25T09:00:00'),
        end: when('2026-03-25T10:00:00'),
      },
    ];
  }
  return seed;
}

const schedule = async (graph: Awaited<ReturnType<typeof start>>['graph'], day: string) => {
  const res = await graph('/me/calendar/getSchedule', {
    method: 'POST',
    headers: { prefer: `outlook.timezone="${W}"` },
    body: {
      schedules: [ALICE],
      startTime: when(`${day}T08:00:00`),
      endTime: when(`${day}T16:00:00`),
      availabilityViewInterval: 60,
    },
  });
  expect(res.status).toBe(200);
  return res.body.value[0] as { availabilityView: string; scheduleItems: { subject: string }[] };
};

describe('an invitation answered by the mailbox', () => {
  it('is seeded with its response, rendered as responseStatus, and free in getSchedule when declined', async () => {
    const { graph, calendarId } = await start(invitations());
    const listed = await graph(
      `/me/calendars/${calendarId('Calendar')}/calendarView?startDateTime=2026-03-24T00:00:00Z&endDateTime=2026-03-26T00:00:00Z&$select=subject,responseStatus,showAs,type`,
    );
    expect(listed.status).toBe(200);
    const responses = Object.fromEntries(
      (listed.body.value as { subject: string; type: string; responseStatus: { response: string } }[]).map(
        (e) => [`${e.subject} ${e.type}`, e.responseStatus.response],
      ),
    );
    expect(responses).toEqual({
      'Declined sync singleInstance': 'declined',
      'Accepted review singleInstance': 'accepted',
      'Weekly occurrence': 'accepted',
      'Weekly exception': 'declined',
      'Open invitation singleInstance': 'notResponded',
    });
    const first = await schedule(graph, '2026-03-24');
    expect(first.scheduleItems.map((i) => i.subject)).toEqual(['Accepted review', 'Weekly']);
    expect(first.availabilityView).toBe('00200200');
    const second = await schedule(graph, '2026-03-25');
    expect(second.scheduleItems.map((i) => i.subject)).toEqual(['Open invitation']);
  });

  it("refuses a response on the mailbox's own event and an unknown response", async () => {
    const seedWith = (event: NonNullable<MicrosoftSeed['users']>[number]['calendars']): MicrosoftSeed => ({
      users: [{ email: ALICE, calendars: event ?? [] }],
    });
    const own = seedWith([
      {
        name: 'Calendar',
        events: [
          {
            subject: 'Mine',
            responseStatus: { response: 'declined' },
            start: when('2026-03-24T09:00:00'),
            end: when('2026-03-24T10:00:00'),
          },
        ],
      },
    ]);
    await expect(start(own)).rejects.toThrow(/only an invitation has a response/);
    const odd = seedWith([
      {
        name: 'Calendar',
        events: [
          {
            subject: 'Odd',
            organizerAddress: ORGANIZER,
            responseStatus: { response: 'maybe' },
            start: when('2026-03-24T09:00:00'),
            end: when('2026-03-24T10:00:00'),
          },
        ],
      },
    ]);
    await expect(start(odd)).rejects.toThrow(/'maybe' is not a response/);
  });

  it('declining deletes the event, or keeps it as free when the mailbox saves declined events', async () => {
    for (const preserve of [false, true]) {
      const { graph, emulator, calendarId } = await start(invitations(preserve));
      const { id } = emulator.admin.addEvent(calendarId('Calendar'), {
        subject: 'Planning',
        organizerAddress: ORGANIZER,
        start: when('2026-03-26T09:00:00'),
        end: when('2026-03-26T10:00:00'),
      });
      expect((await schedule(graph, '2026-03-26')).scheduleItems.map((i) => i.subject)).toEqual(['Planning']);
      expect(
        (await graph(`/me/events/${id}/decline`, { method: 'POST', body: { sendResponse: true } })).status,
      ).toBe(202);
      const after = await graph(`/me/events/${id}?$select=showAs,responseStatus`);
      if (preserve) {
        expect(after.status).toBe(200);
        expect(after.body.showAs).toBe('free');
        expect(after.body.responseStatus.response).toBe('declined');
      } else {
        expect(after.status).toBe(404);
      }
      expect((await schedule(graph, '2026-03-26')).scheduleItems).toEqual([]);
    }
  });
});
