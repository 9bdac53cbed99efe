import { CalgateError } from '@calgate/core';
import type { CalendarEvent, CalendarProvider, EventPatch } from '@calgate/providers';
import { describe, expect, it } from 'vitest';
import type { CalendarHandle, KeyCalendar } from '../src/access.ts';
import {
  attendeesFrom,
  checkedRange,
  derivedEventId,
  keepDuration,
  uniqueEmails,
} from '../src/tools/write/common.ts';
import { similarTitles } from '../src/tools/write/conflicts.ts';
import { guardedPatch } from '../src/tools/write/guarded.ts';
import { changeAttendees } from '../src/tools/write/manage-attendees.ts';
import { selfAttendee } from '../src/tools/write/respond-to-event.ts';
import { seriesPatch } from '../src/tools/write/scoped.ts';
import { occurrenceTimes, splitRecurrence } from '../src/tools/write/split.ts';
import { isEmail } from '../src/write-schemas.ts';

describe('splitRecurrence', () => {
  const start = { dateTime: '2026-03-02T09:00:00', timeZone: 'Europe/Berlin' };
  const end = { dateTime: '2026-03-02T09:30:00', timeZone: 'Europe/Berlin' };
  const at = Date.parse('2026-03-05T08:00:00Z'); // the 4th daily occurrence, 09:00 CET

  it('turns COUNT into UNTIL before the split and gives the new series what remains', () => {
    const split = splitRecurrence(['RRULE:FREQ=DAILY;COUNT=10'], start, end, at, 'UTC');
    expect(split.ok && split.value).toEqual({
      head: ['RRULE:FREQ=DAILY;UNTIL=20260305T075959Z'],
      tail: ['RRULE:FREQ=DAILY;COUNT=7'],
    });
  });

  it('keeps an UNTIL for the new series and an endless rule endless', () => {
    const bounded = splitRecurrence(['RRULE:FREQ=DAILY;UNTIL=20260331T230000Z'], start, end, at, 'UTC');
    expect(bounded.ok && bounded.value.tail).toEqual(['RRULE:FREQ=DAILY;UNTIL=20260331T230000Z']);
    const endless = splitRecurrence(['RRULE:FREQ=WEEKLY;BYDAY=MO,TH'], start, end, at, 'UTC');
    expect(endless.ok && endless.value).toEqual({
      head: ['RRULE:FREQ=WEEKLY;UNTIL=20260305T075959Z;BYDAY=MO,TH'],
      tail: ['RRULE:FREQ=WEEKLY;BYDAY=MO,TH'],
    });
  });

  it('counts occurrences across a DST change by the rule, in the series zone', () => {
    // Daily at 09:00 Berlin from 2026-03-27; DST starts on the 29th. Split at the 4th (the 30th).
    const s = { dateTime: '2026-03-27T09:00:00', timeZone: 'Europe/Berlin' };
    const e = { dateTime: '2026-03-27T10:00:00', timeZone: 'Europe/Berlin' };
    const split = splitRecurrence(
      ['RRULE:FREQ=DAILY;COUNT=5'],
      s,
      e,
      Date.parse('2026-03-30T07:00:00Z'),
      'UTC',
    );
    expect(split.ok && split.value.tail).toEqual(['RRULE:FREQ=DAILY;COUNT=2']);
  });

  it('uses a DATE UNTIL for all-day series and splits RDATEs; EXDATEs go to both', () => {
    const split = splitRecurrence(
      ['RRULE:FREQ=WEEKLY;COUNT=4', 'RDATE;VALUE=DATE:20260303,20260320', 'EXDATE;VALUE=DATE:20260316'],
      { date: '2026-03-02' },
      { date: '2026-03-03' },
      Date.parse('2026-03-09T00:00:00Z'),
      'UTC',
    );
    expect(split.ok && split.value).toEqual({
      head: ['RRULE:FREQ=WEEKLY;UNTIL=20260308', 'RDATE;VALUE=DATE:20260303', 'EXDATE;VALUE=DATE:20260316'],
      tail: ['RRULE:FREQ=WEEKLY;COUNT=3', 'RDATE;VALUE=DATE:20260320', 'EXDATE;VALUE=DATE:20260316'],
    });
  });

  it('reports a split after the last occurrence', () => {
    const split = splitRecurrence(['RRULE:FREQ=DAILY;COUNT=2'], start, end, at, 'UTC');
    expect(split.ok).toBe(false);
  });

  it('gives the occurrence times in the master representation', () => {
    expect(occurrenceTimes({ start, end }, at, 'UTC')).toEqual({
      start: { dateTime: '2026-03-05T09:00:00', timeZone: 'Europe/Berlin' },
      end: { dateTime: '2026-03-05T09:30:00', timeZone: 'Europe/Berlin' },
    });
    expect(
      occurrenceTimes(
        { start: { date: '2026-03-02' }, end: { date: '2026-03-04' } },
        Date.parse('2026-03-08T23:00:00Z'),
        'Europe/Berlin',
      ),
    ).toEqual({ start: { date: '2026-03-09' }, end: { date: '2026-03-11' } });
  });
});

describe('seriesPatch: a time change of one occurrence moves the whole series by wall-clock time', () => {
  const master: CalendarEvent = {
    id: 'm',
    status: 'confirmed',
    start: { dateTime: '2026-03-02T09:00:00+01:00', timeZone: 'Europe/Berlin' },
    end: { dateTime: '2026-03-02T09:30:00+01:00', timeZone: 'Europe/Berlin' },
    recurrence: ['RRULE:FREQ=DAILY'],
  };
  // An occurrence after the DST change: 09:00 CEST.
  const occurrence: CalendarEvent = {
    id: 'm_20260401T070000Z',
    status: 'confirmed',
    start: { dateTime: '2026-04-01T09:00:00+02:00' },
    end: { dateTime: '2026-04-01T09:30:00+02:00' },
    recurringEventId: 'm',
  };

  it('moves 09:00 to 10:15 in the series zone across DST', () => {
    const notes: string[] = [];
    const patch = seriesPatch(
      { start: { dateTime: '2026-04-01T10:15:00+02:00' }, end: { dateTime: '2026-04-01T11:00:00+02:00' } },
      occurrence,
      master,
      'UTC',
      notes,
    );
    expect(patch.start).toEqual({ dateTime: '2026-03-02T10:15:00', timeZone: 'Europe/Berlin' });
    expect(patch.end).toEqual({ dateTime: '2026-03-02T11:00:00', timeZone: 'Europe/Berlin' });
    expect(notes).toEqual([]);
  });

  it('warns when a day move meets a rule that names days', () => {
    const notes: string[] = [];
    seriesPatch(
      { start: { dateTime: '2026-04-02T09:00:00+02:00' } },
      occurrence,
      { ...master, recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=WE'] },
      'UTC',
      notes,
    );
    expect(notes[0]).toMatch(/BYDAY/);
  });

  it('refuses a new end that would come before the series start', () => {
    expect(() =>
      seriesPatch({ end: { dateTime: '2026-04-01T08:30:00+02:00' } }, occurrence, master, 'UTC', []),
    ).toThrow(/end must be later than start/);
  });

  it('refuses to switch a series between timed and all-day from one occurrence', () => {
    expect(() => seriesPatch({ start: { date: '2026-04-01' } }, occurrence, master, 'UTC', [])).toThrow(
      /all-day/,
    );
  });
});

describe('keepDuration: a new start alone keeps the length of what it moves', () => {
  const master: CalendarEvent = {
    id: 'm',
    status: 'confirmed',
    start: { dateTime: '2026-03-02T09:00:00', timeZone: 'Europe/Berlin' },
    end: { dateTime: '2026-03-02T09:15:00', timeZone: 'Europe/Berlin' },
    recurrence: ['RRULE:FREQ=DAILY'],
  };

  it('gives a series master an end 15 minutes after its new start, in its zone', () => {
    expect(keepDuration({ start: { dateTime: '2026-03-02T09:30:00+01:00' } }, master, 'UTC')).toEqual({
      start: { dateTime: '2026-03-02T09:30:00+01:00' },
      end: { dateTime: '2026-03-02T09:45:00+01:00', timeZone: 'Europe/Berlin' },
    });
  });

  it('keeps the days of an all-day series', () => {
    const allDay = { ...master, start: { date: '2026-03-02' }, end: { date: '2026-03-04' } };
    expect(keepDuration({ start: { date: '2026-03-10' } }, allDay, 'UTC').end).toEqual({
      date: '2026-03-12',
    });
  });

  it('asks for an end when the new start switches between timed and all-day', () => {
    expect(() => keepDuration({ start: { date: '2026-03-10' } }, master, 'UTC')).toThrow(/pass end as well/);
  });

  it('refuses a new end alone before the start', () => {
    expect(() => keepDuration({ end: { dateTime: '2026-03-02T08:00:00+01:00' } }, master, 'UTC')).toThrow(
      /end must be later than start/,
    );
  });
});

describe('small helpers', () => {
  it('derives stable base32hex event ids from their parts', () => {
    const id = derivedEventId('create', 'key_1', 'cal_1', 'r1');
    expect(id).toMatch(/^[0-9a-v]{51,52}$/);
    expect(derivedEventId('create', 'key_1', 'cal_1', 'r1')).toBe(id);
    expect(derivedEventId('create', 'key_2', 'cal_1', 'r1')).not.toBe(id);
    expect(derivedEventId('create', 'key_1', 'cal_1r', '1')).not.toBe(id);
  });

  it('validates email addresses', () => {
    for (const ok of ['a@b.co', 'first.last+tag@sub.example.org', 'ÜSER@exämple.de']) {
      expect(isEmail(ok), ok).toBe(true);
    }
    for (const bad of ['a', 'a@b', 'a b@c.de', 'Ann <ann@x.com>', 'a@@b.com', 'a..b@c.com', '@x.com']) {
      expect(isEmail(bad), bad).toBe(false);
    }
  });

  it('de-duplicates emails case-insensitively, keeping stored attendee details', () => {
    expect(uniqueEmails(['A@x.com', 'a@X.com', ' b@x.com '])).toEqual(['A@x.com', 'b@x.com']);
    expect(
      attendeesFrom(['ANN@x.com', 'new@x.com'], [{ email: 'ann@x.com', responseStatus: 'accepted' }]),
    ).toEqual([{ email: 'ann@x.com', responseStatus: 'accepted' }, { email: 'new@x.com' }]);
  });

  it('adds and removes attendees without touching the rest', () => {
    const change = changeAttendees(
      [{ email: 'ann@x.com', responseStatus: 'accepted' }, { email: 'Dave@x.com' }],
      ['carl@x.com', 'CARL@x.com', 'ann@X.com'],
      ['dave@x.com', 'zoe@x.com'],
    );
    expect(change).toEqual({
      attendees: [{ email: 'ann@x.com', responseStatus: 'accepted' }, { email: 'carl@x.com' }],
      added: ['carl@x.com'],
      removed: ['Dave@x.com'],
      unchanged: ['zoe@x.com', 'ann@X.com'],
    });
  });

  it('finds the calendar account among attendees', () => {
    const calendar = { accountEmail: 'Ann@x.com', externalId: 'ann@x.com' };
    expect(selfAttendee([{ email: 'b@x.com' }, { email: 'ANN@x.com' }], calendar)?.email).toBe('ANN@x.com');
    expect(selfAttendee([{ email: 'b@x.com', self: true }], calendar)?.email).toBe('b@x.com');
    expect(selfAttendee([{ email: 'b@x.com' }], calendar)).toBeUndefined();
  });

  it('checks ranges: same kind, end after start, exclusive all-day end', () => {
    expect(checkedRange({ date: '2026-04-20' }, { date: '2026-04-21' }, 'Europe/Berlin')).toEqual({
      start: Date.parse('2026-04-19T22:00:00Z'),
      end: Date.parse('2026-04-20T22:00:00Z'),
    });
    expect(() => checkedRange({ date: '2026-04-20' }, { date: '2026-04-20' }, 'UTC')).toThrow(/exclusive/);
    expect(() => checkedRange({ date: '2026-04-20' }, { dateTime: '2026-04-21T00:00:00Z' }, 'UTC')).toThrow(
      /both/,
    );
  });

  it.each([
    ['Design review', 'design-review', true],
    ['Stand-up', 'standup', true],
    ['Design review', 'Design review – API', true],
    ['Weekly sync with Ann', 'Weekly Sync with ANN!', true],
    ['Lunch', 'Lunch with Ann', false],
    ['Design review', 'Budget review', false],
    ['', 'x', false],
  ])('similarTitles(%j, %j) is %s', (a, b, expected) => {
    expect(similarTitles(a, b)).toBe(expected);
  });
});

describe('guardedPatch', () => {
  const calendar = { id: 'cal_1', externalId: 'cal_1', timeZone: 'UTC' } as unknown as KeyCalendar;

  /** A provider whose stored event another writer changes right after our read. */
  function racing(concurrent: Partial<CalendarEvent>) {
    let stored: CalendarEvent = {
      id: 'e1',
      status: 'confirmed',
      summary: 'Plan',
      location: 'Room 1',
      start: { dateTime: '2026-01-01T09:00:00Z' },
      end: { dateTime: '2026-01-01T10:00:00Z' },
      etag: '"1"',
    };
    let raced = false;
    const writes: EventPatch[] = [];
    const provider = {
      kind: 'local',
      async getEvent() {
        const copy = { ...stored };
        if (!raced) {
          raced = true;
          stored = { ...stored, ...concurrent, etag: '"2"' };
        }
        return copy;
      },
      async patchEvent(_ref: unknown, _id: string, patch: EventPatch, options: { ifMatch?: string }) {
        if (options.ifMatch !== stored.etag) {
          throw new CalgateError('precondition_failed', 'etag');
        }
        writes.push(patch);
        stored = { ...stored, ...patch, etag: '"3"' } as CalendarEvent;
        return stored;
      },
    } as unknown as CalendarProvider;
    const handle: CalendarHandle = {
      calendar,
      ref: { id: 'cal_1', externalId: 'cal_1', timeZone: 'UTC' },
      provider,
    };
    return { handle, writes, stored: () => stored };
  }

  it('re-applies on top of a concurrent edit of other fields', async () => {
    const { handle, stored } = racing({ location: 'Room 9' });
    const result = await guardedPatch(handle, 'e1', () => ({ summary: 'Plan v2' }));
    expect(result).toMatchObject({ written: true, retried: true });
    expect(stored()).toMatchObject({ summary: 'Plan v2', location: 'Room 9' });
  });

  it('refuses to overwrite a concurrent edit of the same field', async () => {
    const { handle, writes, stored } = racing({ summary: 'Plan (Bob)' });
    await expect(guardedPatch(handle, 'e1', () => ({ summary: 'Plan v2' }))).rejects.toThrow(
      /changed by someone else.*summary/,
    );
    expect(writes).toEqual([]);
    expect(stored().summary).toBe('Plan (Bob)');
  });

  it('treats start, end and recurrence as one: a moved end blocks a new start', async () => {
    const { handle } = racing({ end: { dateTime: '2026-01-01T11:00:00Z' } });
    await expect(
      guardedPatch(handle, 'e1', () => ({ start: { dateTime: '2026-01-01T08:00:00Z' } })),
    ).rejects.toThrow(/start, end, recurrence|end/);
  });

  it('rebuilds a delta on the newer version when asked to rebase', async () => {
    const { handle, stored } = racing({ summary: 'Plan (Bob)' });
    await guardedPatch(handle, 'e1', (current) => ({ summary: `${current.summary} +1` }), { rebase: true });
    expect(stored().summary).toBe('Plan (Bob) +1');
  });
});
