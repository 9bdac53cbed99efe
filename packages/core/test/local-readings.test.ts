import { describe, expect, it } from 'vitest';
import { formatInstant, readLocal, suggestTimeZone, validateTimeZone } from '../src/index.ts';

const local = (y: number, mo: number, d: number, h: number, mi: number) => ({
  year: y,
  month: mo,
  day: d,
  hour: h,
  minute: mi,
  second: 0,
  millisecond: 0,
});

describe('readLocal: a wall-clock time an agent wrote, read in a zone', () => {
  it('refuses a time in the spring-forward gap by name, with the clocks on either side', () => {
    const berlin = readLocal(local(2027, 3, 28, 2, 30), 'Europe/Berlin');
    expect(berlin.ok).toBe(false);
    expect(berlin.ok ? '' : berlin.error.message).toBe(
      '02:30 does not exist on 2027-03-28 in Europe/Berlin (clocks go from 02:00 to 03:00); give a time before 02:00 or from 03:00.',
    );
    // Lord Howe moves by half an hour.
    const howe = readLocal(local(2027, 10, 3, 2, 15), 'Australia/Lord_Howe');
    expect(howe.ok ? '' : howe.error.message).toMatch(
      /^02:15 does not exist .* \(clocks go from 02:00 to 02:30\)/,
    );
  });

  it('takes the first reading of a repeated time and names both', () => {
    const read = readLocal(local(2027, 10, 31, 2, 30), 'Europe/Berlin');
    expect(read.ok).toBe(true);
    if (read.ok) {
      expect(formatInstant(read.value.instant, 'Europe/Berlin')).toBe('2027-10-31T02:30:00+02:00');
      expect(read.value.notice).toBe(
        '02:30 on 2027-10-31 happens twice in Europe/Berlin (+02:00 and +01:00); the first (+02:00) was taken. Give the offset (2027-10-31T02:30:00+01:00) for the second.',
      );
    }
  });

  it('reads ordinary times without a notice, in UTC too', () => {
    for (const [zone, expected] of [
      ['Europe/Berlin', '2026-12-07T09:00:00+01:00'],
      ['America/New_York', '2026-12-07T09:00:00-05:00'],
      ['UTC', '2026-12-07T09:00:00Z'],
    ] as const) {
      const read = readLocal(local(2026, 12, 7, 9, 0), zone);
      expect(read.ok && formatInstant(read.value.instant, zone)).toBe(expected);
      expect(read.ok && read.value.notice).toBeUndefined();
    }
    expect(readLocal(local(2026, 12, 7, 9, 0), 'Mars/Olympus').ok).toBe(false);
  });
});

describe('suggestTimeZone: what a near-miss most likely means', () => {
  it('finds cities, other cases and typos, current names first', () => {
    expect(suggestTimeZone('Berlin')).toBe('Europe/Berlin');
    expect(suggestTimeZone('new york')).toBe('America/New_York');
    expect(suggestTimeZone('europe/berlin')).toBe('Europe/Berlin');
    expect(suggestTimeZone('Europe/Berln')).toBe('Europe/Berlin');
    expect(suggestTimeZone('Kolkata')).toBe('Asia/Kolkata');
    expect(suggestTimeZone('Mars/Olympus')).toBeUndefined();
  });

  it('validateTimeZone says it in its message', () => {
    const checked = validateTimeZone('Berlin');
    expect(checked.ok ? '' : checked.error.message).toBe(
      "Unknown time zone 'Berlin'. Did you mean 'Europe/Berlin'? Time zones are IANA names such as 'Europe/Berlin' or 'UTC'.",
    );
  });
});
