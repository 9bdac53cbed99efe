import type { CalendarProvider } from '@calgate/providers';
import { describe, expect, it } from 'vitest';
import { CalendarAccess, type KeyCalendar } from '../src/index.ts';

// The provider is never reached in these checks; the real one is exercised end to end in the
// gateway tests. Here only the grant logic in front of it is under test.
const provider = { kind: 'local' } as unknown as CalendarProvider;

function calendar(overrides: Partial<KeyCalendar>): KeyCalendar {
  return {
    id: 'cal_a',
    externalId: 'cal_a',
    summary: 'A',
    timeZone: 'UTC',
    primary: false,
    enabled: true,
    accessRole: 'owner',
    connectionId: 'con_1',
    provider: 'local',
    auth: 'none',
    accountEmail: 'local',
    connectionStatus: 'active',
    canRead: true,
    canWrite: false,
    ...overrides,
  };
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
      /ambiguous.*cal_a \(ada@example.com\), cal_b \(bob@example.com\)/,
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
