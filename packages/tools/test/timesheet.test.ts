import { describe, expect, it } from 'vitest';
import { buildTimesheet, localDays, type TimesheetItem, timesheetCsv } from '../src/tools/rules/timesheet.ts';

const at = (text: string) => Date.parse(text);
let counter = 0;
function item(
  start: string,
  end: string,
  projectId: string | null,
  extra: Partial<TimesheetItem> = {},
): TimesheetItem {
  counter++;
  return {
    calendarId: 'cal_a',
    eventId: `evt${counter}`,
    start: at(start),
    end: at(end),
    projectId,
    declined: false,
    allDay: false,
    ...extra,
  };
}

describe('buildTimesheet', () => {
  it('counts time of one project that overlaps itself once, and reports overlaps between projects', () => {
    const sheet = buildTimesheet(
      [
        item('2026-11-23T09:00:00+01:00', '2026-11-23T10:00:00+01:00', 'acme'),
        item('2026-11-23T09:30:00+01:00', '2026-11-23T10:30:00+01:00', 'acme'),
        item('2026-11-23T10:00:00+01:00', '2026-11-23T11:00:00+01:00', 'globex'),
      ],
      { timeZone: 'Europe/Berlin', groupBy: 'day' },
    );
    expect(sheet.lines).toEqual([
      { period: '2026-11-23', projectId: 'acme', minutes: 90, hours: 1.5 },
      { period: '2026-11-23', projectId: 'globex', minutes: 60, hours: 1 },
    ]);
    expect(sheet.overlaps).toEqual([{ date: '2026-11-23', projectIds: ['acme', 'globex'], minutes: 30 }]);
  });

  it('splits an event at local midnight in the timesheet zone, and the zone decides the day', () => {
    const late = item('2026-11-23T22:00:00Z', '2026-11-24T02:00:00Z', 'acme');
    expect(buildTimesheet([late], { timeZone: 'UTC', groupBy: 'day' }).lines).toEqual([
      { period: '2026-11-23', projectId: 'acme', minutes: 120, hours: 2 },
      { period: '2026-11-24', projectId: 'acme', minutes: 120, hours: 2 },
    ]);
    // In Tokyo (+09:00) the same four hours are all on the 24th.
    expect(buildTimesheet([late], { timeZone: 'Asia/Tokyo', groupBy: 'day' }).lines).toEqual([
      { period: '2026-11-24', projectId: 'acme', minutes: 240, hours: 4 },
    ]);
  });

  it('leaves out declined, all-day and skipped time unless asked; unclassified time is a line of its own', () => {
    const items = [
      item('2026-11-23T09:00:00Z', '2026-11-23T10:00:00Z', 'acme'),
      item('2026-11-23T10:00:00Z', '2026-11-23T11:00:00Z', 'acme', { declined: true }),
      item('2026-11-23T00:00:00Z', '2026-11-24T00:00:00Z', 'acme', { allDay: true }),
      item('2026-11-23T12:00:00Z', '2026-11-23T12:20:00Z', null),
      item('2026-11-23T13:00:00Z', '2026-11-23T14:00:00Z', 'skip'),
    ];
    const sheet = buildTimesheet(items, { timeZone: 'UTC', groupBy: 'day' });
    expect(sheet.lines).toEqual([
      { period: '2026-11-23', projectId: 'acme', minutes: 60, hours: 1 },
      { period: '2026-11-23', projectId: null, minutes: 15, hours: 0.25 },
    ]);
    expect(sheet.excluded).toEqual({ declined: 1, allDay: 1, skipped: 1 });
    const all = buildTimesheet(items, {
      timeZone: 'UTC',
      groupBy: 'project',
      includeDeclined: true,
      includeAllDay: true,
    });
    expect(all.lines).toEqual([
      { projectId: 'acme', minutes: 1440, hours: 24 },
      { projectId: null, minutes: 15, hours: 0.25 },
    ]);
  });

  it('rounds each line to 15 minutes by default (half up), to any step asked, or not at all', () => {
    const items = [
      item('2026-11-23T09:00:00Z', '2026-11-23T09:07:29Z', 'a'),
      item('2026-11-23T09:00:00Z', '2026-11-23T09:07:30Z', 'b'),
    ];
    expect(
      buildTimesheet(items, { timeZone: 'UTC', groupBy: 'project' }).lines.map((l) => l.minutes),
    ).toEqual([0, 15]);
    expect(
      buildTimesheet(items, { timeZone: 'UTC', groupBy: 'project', roundingMinutes: 6 }).lines.map(
        (l) => l.minutes,
      ),
    ).toEqual([6, 6]);
    expect(
      buildTimesheet(items, { timeZone: 'UTC', groupBy: 'project', roundingMinutes: 0 }).lines.map(
        (l) => l.minutes,
      ),
    ).toEqual([449 / 60, 7.5]);
  });

  it('groups by ISO week across a year boundary', () => {
    const sheet = buildTimesheet(
      [
        item('2026-12-31T09:00:00Z', '2026-12-31T10:00:00Z', 'acme'),
        item('2027-01-04T09:00:00Z', '2027-01-04T10:00:00Z', 'acme'),
      ],
      { timeZone: 'UTC', groupBy: 'week' },
    );
    expect(sheet.lines).toEqual([
      { period: '2026-W53', projectId: 'acme', minutes: 60, hours: 1 },
      { period: '2027-W01', projectId: 'acme', minutes: 60, hours: 1 },
    ]);
    expect(sheet.totals).toEqual([{ projectId: 'acme', minutes: 120, hours: 2 }]);
  });

  it('counts a DST day in Berlin by its real length', () => {
    const sheet = buildTimesheet([item('2026-10-25T00:00:00+02:00', '2026-10-26T00:00:00+01:00', 'acme')], {
      timeZone: 'Europe/Berlin',
      groupBy: 'day',
      roundingMinutes: 0,
    });
    expect(sheet.lines).toEqual([{ period: '2026-10-25', projectId: 'acme', minutes: 25 * 60, hours: 25 }]);
    expect(localDays(at('2026-10-24T22:00:00Z'), at('2026-10-26T23:00:00Z'), 'Europe/Berlin')).toEqual([
      '2026-10-25',
      '2026-10-26',
    ]);
  });
});

describe('timesheetCsv', () => {
  it('writes names and clients, quotes what needs it, and labels unclassified time', () => {
    const sheet = buildTimesheet(
      [
        item('2026-11-23T09:00:00Z', '2026-11-23T10:30:00Z', 'acme'),
        item('2026-11-23T11:00:00Z', '2026-11-23T11:15:00Z', null),
      ],
      { timeZone: 'UTC', groupBy: 'day' },
    );
    const csv = timesheetCsv(sheet, new Map([['acme', { name: 'Acme, "Phase 2"', client: 'Acme Corp' }]]));
    expect(csv).toBe(
      'period,project,client,hours\r\n2026-11-23,"Acme, ""Phase 2""",Acme Corp,1.50\r\n2026-11-23,Unclassified,,0.25\r\n',
    );
  });
});
