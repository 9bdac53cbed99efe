/**
 * Recurrence expansion cross-checked against python3-icalendar (parsing) and python3-dateutil
 * (rrule sets) on generated series: zones with DST changes, DTSTARTs in DST gaps, COUNT and UNTIL,
 * BYDAY and BYMONTHDAY, and EXDATEs on and off the rule.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expandResource, parseCalendarText } from '../../src/caldav/ical/index.ts';

const SCRIPT = fileURLToPath(new URL('./dateutil-expand.py', import.meta.url));
const FROM = '2026-01-01T00:00:00+00:00';
const TO = '2028-01-01T00:00:00+00:00';

function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata', 'America/Santiago'];
const DAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];
const pad = (n: number) => String(n).padStart(2, '0');

function generate(count: number, seed: number): string {
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const lines: string[] = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//generated//EN'];
  for (let i = 0; i < count; i += 1) {
    const zone = pick(ZONES);
    const month = 1 + Math.floor(next() * 12);
    const day = 1 + Math.floor(next() * 28);
    // Hours around 0–3 hit DST gaps and folds in most of these zones.
    const hour = pick([0, 1, 2, 3, 9, 12, 23]);
    const minute = pick([0, 30]);
    const start = `2026${pad(month)}${pad(day)}T${pad(hour)}${pad(minute)}00`;
    const weekday = DAYS[(new Date(Date.UTC(2026, month - 1, day)).getUTCDay() + 6) % 7] as string;
    const freq = pick(['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY']);
    const parts = [`FREQ=${freq}`, `INTERVAL=${1 + Math.floor(next() * 3)}`];
    if (freq === 'WEEKLY' && next() < 0.5) {
      parts.push(`BYDAY=${[...new Set([weekday, pick(DAYS)])].join(',')}`);
    }
    if (freq === 'MONTHLY' && next() < 0.5) {
      parts.push(`BYMONTHDAY=${[...new Set([day, 1 + Math.floor(next() * 28)])].join(',')}`);
    }
    const bound = next();
    if (bound < 0.4) {
      parts.push(`COUNT=${1 + Math.floor(next() * 40)}`);
    } else if (bound < 0.8) {
      const until = new Date(Date.UTC(2026, month - 1, day) + next() * 500 * 86_400_000);
      parts.push(`UNTIL=${until.toISOString().slice(0, 10).replace(/-/g, '')}T${pad(hour)}${pad(minute)}00Z`);
    }
    lines.push('BEGIN:VEVENT', `UID:gen-${i}`, 'DTSTAMP:20260101T000000Z', `DTSTART;TZID=${zone}:${start}`);
    lines.push(`RRULE:${parts.join(';')}`);
    const exdates: string[] = [];
    for (let k = 0; k < 3; k += 1) {
      const offsetDays = Math.floor(next() * 60);
      const d = new Date(Date.UTC(2026, month - 1, day) + offsetDays * 86_400_000);
      exdates.push(`${d.toISOString().slice(0, 10).replace(/-/g, '')}T${pad(hour)}${pad(minute)}00`);
    }
    lines.push(`EXDATE;TZID=${zone}:${exdates.join(',')}`);
    lines.push('END:VEVENT');
  }
  lines.push('END:VCALENDAR', '');
  return lines.join('\r\n');
}

describe('expansion agrees with python-dateutil', () => {
  it.each([1, 2, 3])('on 120 generated series (seed %i)', (seed) => {
    const text = generate(120, seed);
    const python = spawnSync('/usr/bin/python3', [SCRIPT, FROM, TO], { input: text, encoding: 'utf8' });
    expect(python.stderr).toBe('');
    const expected = JSON.parse(python.stdout) as Record<string, string[]>;
    const ours: Record<string, string[]> = {};
    for (const resource of parseCalendarText(text, 'UTC').resources) {
      ours[resource.uid] = expandResource(resource, { from: Date.parse(FROM), to: Date.parse(TO) }).map(
        (event) => new Date(Date.parse(event.start.dateTime ?? '')).toISOString().replace('.000', ''),
      );
    }
    expect(Object.keys(ours).length).toBe(120);
    expect(ours).toEqual(expected);
    // Not a vacuous comparison: thousands of instances, and EXDATEs that took some away.
    const withoutExdates = generate(120, seed).replace(/\r\nEXDATE[^\r]*/g, '');
    const total = (t: string) =>
      parseCalendarText(t, 'UTC').resources.reduce(
        (sum, r) => sum + expandResource(r, { from: Date.parse(FROM), to: Date.parse(TO) }).length,
        0,
      );
    expect(total(text)).toBeGreaterThan(2000);
    expect(total(withoutExdates)).toBeGreaterThan(total(text));
  });
});
