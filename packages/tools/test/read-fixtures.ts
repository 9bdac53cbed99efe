import type { EventOut } from '../src/schemas.ts';

const PEOPLE = [
  'ann@example.com',
  'bob@example.com',
  'chen.li@example.org',
  'dara@partner.io',
  'eve@example.com',
];
const TOPICS = [
  'Design review',
  'Customer call: Acme',
  '1:1 Ann / Bob',
  'Sprint planning',
  'Lunch',
  'Hiring panel',
];

/** 50 realistic events of one week: attendees, descriptions, locations, recurring instances. */
export function realisticEvents(count = 50): EventOut[] {
  return Array.from({ length: count }, (_, i) => {
    const day = 1 + (i % 5);
    const hour = 8 + ((i * 3) % 9);
    const recurring = i % 4 === 0;
    const start = `2026-12-0${day}T${String(hour).padStart(2, '0')}:00:00+01:00`;
    const end = `2026-12-0${day}T${String(hour).padStart(2, '0')}:45:00+01:00`;
    const event: EventOut = {
      id: recurring
        ? `5qk3b0c8e1g2h3i4j5k6l7m8n9_202612${String(day).padStart(2, '0')}T0${hour % 10}0000Z`
        : `e${i}vq2k8m4t1r0s9p7u6o5n3l2j`,
      calendarId: i % 3 === 0 ? 'cal_4Yt2mQ9pXwLk7Hs3' : 'cal_8Rb5nV1cZe6Jq2Dw',
      status: 'confirmed',
      summary: `${TOPICS[i % TOPICS.length]}${recurring ? '' : ` #${i}`}`,
      start: { dateTime: start, timeZone: 'Europe/Berlin' },
      end: { dateTime: end, timeZone: 'Europe/Berlin' },
      htmlLink: `https://www.google.com/calendar/event?eid=ZXZlbnQ${i}`,
      updated: `2026-11-${String(10 + (i % 18)).padStart(2, '0')}T${String(8 + (i % 10)).padStart(2, '0')}:${String((i * 7) % 60).padStart(2, '0')}:00.000Z`,
    };
    if (i % 2 === 0) {
      event.description = `Agenda: status, risks and next steps for item ${i}. Notes in the shared doc.`;
    }
    if (i % 3 !== 2) {
      event.location =
        i % 3 === 0 ? 'Room 4.12, Alexanderplatz 1, Berlin' : 'https://meet.example.com/abc-defg-hij';
    }
    if (i % 5 !== 4) {
      event.attendees = PEOPLE.slice(0, 2 + (i % 3)).map((email, k) => ({
        email,
        responseStatus: k === 0 ? 'accepted' : 'needsAction',
        ...(k === 0 ? { organizer: true } : {}),
      }));
      event.organizer = { email: PEOPLE[0] as string };
    }
    if (recurring) {
      event.recurringEventId = '5qk3b0c8e1g2h3i4j5k6l7m8n9';
      event.originalStartTime = { dateTime: start, timeZone: 'Europe/Berlin' };
    }
    return event;
  });
}
