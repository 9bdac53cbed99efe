import type { CalendarProvider } from '@calgate/providers';
import { describe, expect, it } from 'vitest';
import { CalendarAccess, type KeyCalendar } from '../src/index.ts';
import { keyCalendar } from './key-calendar.ts';

// The provider is never reached in these checks; the real one is exercised end to end in the
// gateway tests. Here only the grant logic in front of it is under test.
const provider = { kind: 'local' } as unknown as CalendarProvider;

function calendar(overrides: Partial<KeyCalendar>): KeyCalendar {
  return keyCalendar({ id: 'cal_a', summary: 'A', ...overrides });
}

function accessWith(...calendars: KeyCalendar[]) {
  return new CalendarAccess({ tenantId: 'tnt_1', keyId: 'key_1', calendars }, () => provider);
}

describe('CalendarAccess', () => {
  it('refuses writes without a write grant, with a message that says how to get one', () => {
    const access = accessWith(calendar({ canWrite: false }));
    expect(() => access.writable('cal_a')).toThrow(/may read but not write calendar 'cal_a'.*tick Write/);
    expect(access.touched.size).toBe(0);
  });

  it('refuses writes to a subscribed iCalendar feed whatever the grant, and still reads it', () => {
    const access = accessWith(calendar({ provider: 'ics', canWrite: true, summary: 'Holidays' }));
    expect(() => access.writable('cal_a')).toThrow(
      "Calendar 'Holidays' (cal_a) is a subscribed iCalendar feed and cannot be changed through Calgate; change it where the feed is published.",
    );
    expect(access.touched.size).toBe(0);
    expect(access.readable('cal_a').calendar.id).toBe('cal_a');
  });

  it('allows writes with a write grant and records the calendar for the audit log', () => {
    const access = accessWith(calendar({ canWrite: true }));
    expect(access.writable('cal_a').calendar.id).toBe('cal_a');
    expect([...access.touched]).toEqual(['cal_a']);
  });

  it('reports a calendar without a grant exactly like one that does not exist', () => {
    const access = accessWith(calendar({ id: 'cal_a' }));
    const message = (id: string) => {
      try {
        access.writable(id);
        return '';
      } catch (error) {
        return (error as Error).message.replace(id, 'X');
      }
    };
    expect(message('cal_other_tenant')).toBe(message('cal_nonexistent'));
    expect(message('cal_nonexistent')).toMatch(/was not found/);
  });

  it("resolves 'primary' to the first account's primary calendar, and refuses ambiguous upstream ids", () => {
    const one = accessWith(calendar({ id: 'cal_a', externalId: 'ada@example.com', primary: true }));
    expect(one.readable('primary').calendar.id).toBe('cal_a');
    expect(one.readable('ada@example.com').calendar.id).toBe('cal_a');
    const two = accessWith(
      calendar({ id: 'cal_a', externalId: 'shared@group', primary: true, accountEmail: 'ada@example.com' }),
      calendar({ id: 'cal_b', externalId: 'shared@group', primary: true, accountEmail: 'bob@example.com' }),
    );
    expect(two.readable('primary').calendar.id).toBe('cal_a');
    expect(() => two.readable('shared@group')).toThrow(
      /ambiguous.*cal_a \('A', ada@example.com\), cal_b \('A', bob@example.com\)/,
    );
  });

  it('keeps disabled calendars and accounts that need reconnecting out of fan-outs, with reasons', () => {
    const access = accessWith(
      calendar({ id: 'cal_a' }),
      calendar({ id: 'cal_b', enabled: false }),
      calendar({ id: 'cal_c', connectionStatus: 'needs_reauth', accountEmail: 'c@example.com' }),
    );
    const { handles, unavailable } = access.allReadable();
    expect(handles.map((h) => h.calendar.id)).toEqual(['cal_a']);
    expect(unavailable.map((u) => [u.calendarId, u.error.code])).toEqual([['cal_c', 'needs_reauth']]);
    expect(() => access.readable('cal_b')).toThrow(/disabled/);
    expect(() => access.readable('cal_c')).toThrow(/c@example.com must be reconnected/);
  });
});

describe('CalendarAccess: default calendar, key zone and calendar names', () => {
  const home = calendar({ id: 'cal_home', summary: 'Home', timeZone: 'UTC', primary: true });
  const team = calendar({ id: 'cal_team', summary: 'Team Berlin', timeZone: 'Europe/Berlin' });
  const work = calendar({ id: 'cal_work', summary: 'Work', timeZone: 'America/New_York', primary: true });

  it("resolves 'primary' to the key's default calendar when one is set", () => {
    const access = new CalendarAccess(
      { tenantId: 'tnt_1', keyId: 'key_1', calendars: [home, team, work], defaultCalendarId: 'cal_work' },
      () => provider,
    );
    expect(access.readable('primary').calendar.id).toBe('cal_work');
    expect(access.timeZone()).toBe('America/New_York');
  });

  it("answers in the request's zone, else the key's own (the person's), else the calendars'", () => {
    const access = new CalendarAccess(
      { tenantId: 'tnt_1', keyId: 'key_1', calendars: [home, team], timeZone: 'Asia/Tokyo' },
      () => provider,
    );
    expect(access.timeZone()).toBe('Asia/Tokyo');
    expect(access.zoneFor(undefined, [team])).toBe('Asia/Tokyo');
    expect(access.zoneFor(undefined, [home, team])).toBe('Asia/Tokyo');
    expect(access.zoneFor('America/Denver', [team])).toBe('America/Denver');
    // Set during the request (set_time_zone): later calls of the same request read it.
    access.timeZoneChanged('Europe/Lisbon');
    expect(access.timeZone()).toBe('Europe/Lisbon');
    expect(access.zoneFor(undefined, [team])).toBe('Europe/Lisbon');
    const unset = new CalendarAccess(
      { tenantId: 'tnt_1', keyId: 'key_1', calendars: [home, team] },
      () => provider,
    );
    expect(unset.zoneFor(undefined, [team])).toBe('Europe/Berlin');
    expect(unset.zoneFor(undefined, [home, team])).toBe(unset.timeZone());
  });

  it('accepts an exact calendar name (any case, accents ignored) and suggests close names otherwise', () => {
    const access = accessWith(home, team);
    expect(access.readable('team berlin').calendar.id).toBe('cal_team');
    expect(access.readable('TEAM BERLIN').calendar.id).toBe('cal_team');
    expect(() => access.readable('Team Berln')).toThrow(
      /not found\. Did you mean 'Team Berlin' \(cal_team\)\?/,
    );
    expect(() => access.readable('Berlin')).toThrow(/Did you mean 'Team Berlin'/);
  });

  it('refuses a name two calendars share, listing both', () => {
    const access = accessWith(team, calendar({ id: 'cal_team2', summary: 'Team Berlin' }));
    expect(() => access.readable('Team Berlin')).toThrow(/ambiguous.*cal_team .*cal_team2/);
  });
});
