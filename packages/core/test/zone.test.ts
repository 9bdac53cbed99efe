import { describe, expect, it } from 'vitest';
import {
  canonicalTimeZone,
  formatInstant,
  formatLocalDateTime,
  formatNaiveMs,
  fromLocal,
  InstantTexts,
  isoInstant,
  isValidTimeZone,
  localFromNaiveMs,
  parseDate,
  parseDateTime,
  parseInstant,
  toLocal,
  utcOffsetMinutes,
  validateTimeZone,
} from '../src/index.ts';

const at = (zone: string, y: number, mo: number, d: number, h = 0, mi = 0) =>
  formatInstant(fromLocal({ year: y, month: mo, day: d, hour: h, minute: mi, second: 0 }, zone));
const inZone = (zone: string, y: number, mo: number, d: number, h = 0, mi = 0) =>
  formatInstant(fromLocal({ year: y, month: mo, day: d, hour: h, minute: mi, second: 0 }, zone), zone);

describe('time zone names', () => {
  it('accepts IANA names and rejects others with a helpful message', () => {
    expect(isValidTimeZone('Europe/Berlin')).toBe(true);
    expect(isValidTimeZone('UTC')).toBe(true);
    expect(isValidTimeZone('Asia/Kathmandu')).toBe(true);
    expect(isValidTimeZone('Mars/Olympus')).toBe(false);
    expect(isValidTimeZone('+01:00')).toBe(false);
    expect(isValidTimeZone('')).toBe(false);
    const bad = validateTimeZone('Europe/Berln');
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.error.code).toBe('invalid_argument');
      expect(bad.error.message).toContain("'Europe/Berlin'");
    }
  });
});

describe('America/New_York', () => {
  it('moves a time in the spring-forward gap forward by the gap', () => {
    expect(inZone('America/New_York', 2026, 3, 8, 2, 30)).toBe('2026-03-08T03:30:00-04:00');
    expect(inZone('America/New_York', 2026, 3, 8, 2, 0)).toBe('2026-03-08T03:00:00-04:00');
    expect(inZone('America/New_York', 2026, 3, 8, 1, 59)).toBe('2026-03-08T01:59:00-05:00');
    expect(inZone('America/New_York', 2026, 3, 8, 3, 0)).toBe('2026-03-08T03:00:00-04:00');
  });
  it('takes the first occurrence of an ambiguous fall-back time', () => {
    expect(at('America/New_York', 2026, 11, 1, 1, 30)).toBe('2026-11-01T05:30:00Z');
    expect(at('America/New_York', 2026, 11, 1, 2, 0)).toBe('2026-11-01T07:00:00Z');
    expect(at('America/New_York', 2026, 11, 1, 0, 59)).toBe('2026-11-01T04:59:00Z');
  });
  it('reads instants back as wall-clock time on both sides of the overlap', () => {
    expect(toLocal(Date.parse('2026-11-01T05:30:00Z'), 'America/New_York')).toMatchObject({
      hour: 1,
      minute: 30,
    });
    expect(toLocal(Date.parse('2026-11-01T06:30:00Z'), 'America/New_York')).toMatchObject({
      hour: 1,
      minute: 30,
    });
    expect(utcOffsetMinutes(Date.parse('2026-11-01T05:30:00Z'), 'America/New_York')).toBe(-240);
    expect(utcOffsetMinutes(Date.parse('2026-11-01T06:30:00Z'), 'America/New_York')).toBe(-300);
  });
});

describe('Europe/Berlin', () => {
  it('handles the March gap and the October overlap', () => {
    expect(inZone('Europe/Berlin', 2026, 3, 29, 2, 30)).toBe('2026-03-29T03:30:00+02:00');
    expect(at('Europe/Berlin', 2026, 10, 25, 2, 30)).toBe('2026-10-25T00:30:00Z');
    expect(at('Europe/Berlin', 2026, 10, 25, 3, 0)).toBe('2026-10-25T02:00:00Z');
    expect(utcOffsetMinutes(Date.parse('2026-07-01T00:00:00Z'), 'Europe/Berlin')).toBe(120);
    expect(utcOffsetMinutes(Date.parse('2026-01-01T00:00:00Z'), 'Europe/Berlin')).toBe(60);
  });
});

describe('zones with odd offsets', () => {
  it('Asia/Kolkata is +05:30 and Asia/Kathmandu +05:45', () => {
    expect(utcOffsetMinutes(Date.parse('2026-06-01T00:00:00Z'), 'Asia/Kolkata')).toBe(330);
    expect(utcOffsetMinutes(Date.parse('2026-06-01T00:00:00Z'), 'Asia/Kathmandu')).toBe(345);
    expect(inZone('Asia/Kathmandu', 2026, 1, 1, 10, 0)).toBe('2026-01-01T10:00:00+05:45');
    expect(at('Asia/Kathmandu', 2026, 1, 1, 0, 0)).toBe('2025-12-31T18:15:00Z');
    // Nepal moved from +05:30 to +05:45 at midnight on 1986-01-01.
    expect(utcOffsetMinutes(Date.parse('1985-12-31T12:00:00Z'), 'Asia/Kathmandu')).toBe(330);
  });
  it('Australia/Lord_Howe shifts by half an hour', () => {
    expect(utcOffsetMinutes(Date.parse('2026-07-01T00:00:00Z'), 'Australia/Lord_Howe')).toBe(630);
    expect(utcOffsetMinutes(Date.parse('2026-01-01T00:00:00Z'), 'Australia/Lord_Howe')).toBe(660);
    // 2026-10-04 02:00 → 02:30: the gap is 30 minutes long.
    expect(inZone('Australia/Lord_Howe', 2026, 10, 4, 2, 15)).toBe('2026-10-04T02:45:00+11:00');
    // 2026-04-05 02:00 → 01:30: 01:45 happens twice; the first is at +11:00.
    expect(inZone('Australia/Lord_Howe', 2026, 4, 5, 1, 45)).toBe('2026-04-05T01:45:00+11:00');
    expect(at('Australia/Lord_Howe', 2026, 4, 5, 2, 0)).toBe('2026-04-04T15:30:00Z');
  });
  it('Pacific/Apia skipped 2011-12-30 entirely', () => {
    expect(inZone('Pacific/Apia', 2011, 12, 29, 23, 0)).toBe('2011-12-29T23:00:00-10:00');
    // Any time on the skipped day moves forward by the 24-hour gap.
    expect(inZone('Pacific/Apia', 2011, 12, 30, 10, 0)).toBe('2011-12-31T10:00:00+14:00');
    expect(inZone('Pacific/Apia', 2011, 12, 31, 0, 0)).toBe('2011-12-31T00:00:00+14:00');
    expect(toLocal(Date.parse('2011-12-30T09:59:00Z'), 'Pacific/Apia')).toMatchObject({
      day: 29,
      hour: 23,
      minute: 59,
    });
    expect(toLocal(Date.parse('2011-12-30T10:00:00Z'), 'Pacific/Apia')).toMatchObject({ day: 31, hour: 0 });
  });
});

describe('RFC 3339 parsing', () => {
  it('parses instants with offsets', () => {
    expect(parseInstant('2026-01-05T09:00:00+01:00')).toEqual({
      ok: true,
      value: Date.parse('2026-01-05T08:00:00Z'),
    });
    expect(parseInstant('2026-01-05T08:00:00.250Z')).toEqual({
      ok: true,
      value: Date.parse('2026-01-05T08:00:00.250Z'),
    });
    expect(parseInstant('2026-01-05t08:00:00z').ok).toBe(true);
  });
  it('reads a local date-time in a zone, and needs one of offset or zone', () => {
    expect(parseDateTime('2026-03-08T02:30:00', 'America/New_York')).toEqual({
      ok: true,
      value: Date.parse('2026-03-08T07:30:00Z'),
    });
    const missing = parseDateTime('2026-01-05T09:00:00');
    expect(missing.ok).toBe(false);
    if (!missing.ok) {
      expect(missing.error.message).toContain('UTC offset is required');
    }
    expect(parseDateTime('2026-01-05T09:00:00', 'Nowhere/Land').ok).toBe(false);
  });
  it.each([
    ['2026-13-01T00:00:00Z', 'month must be 01–12'],
    ['2026-02-29T00:00:00Z', '2026-02 has days 01–28'],
    ['2026-01-05T24:00:00Z', '00:00:00–23:59:59'],
    ['2026-01-05 09:00', 'expected RFC 3339'],
    ['2026-01-05T09:00:00+25:00', 'offset must be'],
  ])('rejects %s', (text, message) => {
    const result = parseInstant(text);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.code).toBe('invalid_argument');
      expect(result.error.message).toContain(message);
    }
  });
  it('parses and validates dates', () => {
    expect(parseDate('2028-02-29')).toEqual({ ok: true, value: { year: 2028, month: 2, day: 29 } });
    const bad = parseDate('2027-02-29');
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.error.message).toContain('2027-02 has days 01–28');
    }
    expect(parseDate('5 Jan 2026').ok).toBe(false);
  });
  it('formats instants in a zone with its offset', () => {
    expect(formatInstant(Date.parse('2026-07-01T12:00:00Z'), 'Asia/Kathmandu')).toBe(
      '2026-07-01T17:45:00+05:45',
    );
    expect(formatInstant(Date.parse('2026-07-01T12:00:00Z'), 'America/St_Johns')).toBe(
      '2026-07-01T09:30:00-02:30',
    );
    expect(formatInstant(Date.parse('2026-07-01T12:00:00Z'))).toBe('2026-07-01T12:00:00Z');
    expect(formatInstant(Date.parse('2026-07-01T12:00:00.045Z'), 'Europe/Berlin')).toBe(
      '2026-07-01T14:00:00.045+02:00',
    );
  });
  it('writes naive milliseconds as the civil reading does, years outside 1000–9999 included', () => {
    const samples = [
      0,
      -1,
      86_399_999,
      Date.parse('0999-12-31T23:59:59.999Z'),
      Date.parse('+010000-01-01T00:00:00Z'),
    ];
    for (let i = 0; i < 2000; i++) {
      samples.push(Math.round((Math.random() - 0.3) * 4e14));
    }
    for (const ms of samples) {
      expect(formatNaiveMs(ms)).toBe(formatLocalDateTime(localFromNaiveMs(ms)));
    }
  });

  it('writes instants exactly as toISOString does, over the whole range of Date', () => {
    const samples = [
      0,
      -1,
      1,
      999,
      -62_167_219_200_000, // 0000-01-01T00:00:00.000Z, the first four-digit year
      -62_167_219_200_001, // the last instant written with six digits and a sign before it
      253_402_300_799_999, // 9999-12-31T23:59:59.999Z
      253_402_300_800_000, // +010000-01-01T00:00:00.000Z
      Date.parse('1970-01-01T00:00:59.999Z'),
      Date.parse('2024-02-29T23:59:00.000Z'),
      8.64e15,
      -8.64e15,
      1_796_198_400_123.5, // toISOString drops what is below a millisecond
    ];
    for (let i = 0; i < 5000; i++) {
      samples.push(Math.round((Math.random() * 2 - 1) * 8.64e15));
      samples.push(Math.round(-62_167_219_200_000 + Math.random() * 315_537_897_600_000));
    }
    for (const ms of samples) {
      expect(isoInstant(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('remembers written instants by instant and zone, never handing one the text of another', () => {
    const zones = [undefined, 'Europe/Berlin', 'America/St_Johns', 'Asia/Kathmandu'];
    const instants: number[] = [];
    for (let i = 0; i < 3000; i++) {
      const ms = Math.round(Date.parse('2020-01-01T00:00:00Z') + Math.random() * 4e11);
      // The same second with other milliseconds, and instants a slot-table's width apart.
      instants.push(ms, ms - (ms % 1000) + ((ms + 7) % 1000), ms + 4096 * 1000);
    }
    const offset = (ms: number, zone: string | undefined) => {
      const minutes = zone === undefined ? 0 : utcOffsetMinutes(ms, zone);
      const abs = Math.abs(minutes);
      return minutes === 0
        ? 'Z'
        : `${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
    };
    for (let pass = 0; pass < 2; pass++) {
      for (const ms of instants) {
        for (const zone of zones) {
          const text = formatInstant(ms, zone);
          expect(Date.parse(text)).toBe(ms);
          expect(text.endsWith(offset(ms, zone))).toBe(true);
          expect(isoInstant(ms)).toBe(new Date(ms).toISOString());
        }
      }
    }
  });

  it('keeps instants written within one second apart (they differ in milliseconds only)', () => {
    const texts = new InstantTexts();
    const second = Date.parse('2026-11-24T18:14:33Z');
    for (let ms = 0; ms < 1000; ms++) {
      texts.set(second + ms, undefined, `t${ms}`);
    }
    let kept = 0;
    for (let ms = 0; ms < 1000; ms++) {
      kept += texts.get(second + ms) === `t${ms}` ? 1 : 0;
    }
    expect(kept).toBeGreaterThanOrEqual(990);
    expect(texts.get(second + 1000)).toBeUndefined();
  });
});

describe('canonicalTimeZone', () => {
  it('gives a zone its usual capitals, keeps current names ICU would make old, refuses unknown ones', () => {
    expect(canonicalTimeZone('europe/berlin')).toEqual({ ok: true, value: 'Europe/Berlin' });
    expect(canonicalTimeZone('Asia/Kolkata')).toEqual({ ok: true, value: 'Asia/Kolkata' });
    expect(canonicalTimeZone('UTC')).toEqual({ ok: true, value: 'UTC' });
    const unknown = canonicalTimeZone('Berlin');
    expect(unknown.ok).toBe(false);
    expect(unknown.ok ? '' : unknown.error.message).toContain("Did you mean 'Europe/Berlin'?");
  });
});
