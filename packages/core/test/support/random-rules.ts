/** Deterministic random RRULEs (valid per RFC 5545) for the dateutil comparison test. */
import { WEEKDAYS } from '../../src/index.ts';

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const ZONES = [
  'UTC',
  'America/New_York',
  'Europe/Berlin',
  'Europe/London',
  'Australia/Sydney',
  'Australia/Lord_Howe',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Pacific/Chatham',
  'America/St_Johns',
  'Pacific/Apia',
];

export interface Case {
  rule: string;
  start: string;
  tz: string;
  limit: number;
  cutoff: string;
}

export function generate(count: number, seed: number): Case[] {
  const rnd = mulberry32(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const some = (lo: number, hi: number, n: number, signed = false) => {
    const out = new Set<number>();
    const k = int(1, n);
    for (let i = 0; i < k; i++) {
      const v = int(lo, hi);
      out.add(signed && rnd() < 0.3 ? -v : v);
    }
    return [...out].join(',');
  };
  const pad = (n: number) => String(n).padStart(2, '0');
  const cases: Case[] = [];
  for (let c = 0; c < count; c++) {
    const freq = pick([
      'YEARLY',
      'YEARLY',
      'MONTHLY',
      'MONTHLY',
      'WEEKLY',
      'WEEKLY',
      'DAILY',
      'DAILY',
      'HOURLY',
      'MINUTELY',
    ]);
    const parts = [`FREQ=${freq}`];
    if (rnd() < 0.4) {
      parts.push(`INTERVAL=${int(2, freq === 'MINUTELY' ? 45 : 5)}`);
    }
    const days = (ordinal: boolean) => {
      const k = int(1, 3);
      const out = new Set<string>();
      // All ordinal or all plain: dateutil intersects a mix (BYDAY=MO,2TU), RFC 5545 unites it.
      const withOrdinals = ordinal && rnd() < 0.6;
      for (let i = 0; i < k; i++) {
        // Ordinals stay within a month when BYMONTH frames them (dateutil crashes past that).
        const top = freq === 'MONTHLY' || parts.some((p) => p.startsWith('BYMONTH=')) ? 4 : 20;
        const n = withOrdinals ? (rnd() < 0.3 ? -int(1, top) : int(1, top)) : null;
        out.add(`${n ?? ''}${pick(WEEKDAYS)}`);
      }
      return [...out].join(',');
    };
    let byCount = 0;
    const add = (p: number, part: () => string) => {
      if (rnd() < p) {
        parts.push(part());
        byCount++;
      }
    };
    if (freq === 'YEARLY') {
      add(0.4, () => `BYMONTH=${some(1, 12, 3)}`);
      const weekNo = rnd() < 0.2;
      if (weekNo) {
        parts.push(`BYWEEKNO=${some(1, 53, 2, true)}`);
        add(0.6, () => `BYDAY=${days(false)}`);
      } else {
        add(0.15, () => `BYYEARDAY=${some(1, 366, 3, true)}`);
        add(0.3, () => `BYMONTHDAY=${some(1, 31, 3, true)}`);
        add(0.4, () => `BYDAY=${days(true)}`);
      }
    } else if (freq === 'MONTHLY') {
      add(0.3, () => `BYMONTH=${some(1, 12, 4)}`);
      add(0.4, () => `BYMONTHDAY=${some(1, 31, 3, true)}`);
      add(0.5, () => `BYDAY=${days(true)}`);
    } else if (freq === 'WEEKLY') {
      add(0.7, () => `BYDAY=${days(false)}`);
      add(0.2, () => `BYMONTH=${some(1, 12, 6)}`);
      if (rnd() < 0.4) {
        parts.push(`WKST=${pick(WEEKDAYS)}`);
      }
    } else if (freq === 'DAILY') {
      add(0.3, () => `BYDAY=${days(false)}`);
      add(0.2, () => `BYMONTHDAY=${some(1, 31, 6, true)}`);
      add(0.2, () => `BYMONTH=${some(1, 12, 6)}`);
    } else if (freq === 'HOURLY') {
      add(0.4, () => `BYHOUR=${some(0, 23, 5)}`);
      add(0.3, () => `BYDAY=${days(false)}`);
      add(0.3, () => `BYMINUTE=${some(0, 59, 2)}`);
    } else {
      add(0.4, () => `BYMINUTE=${some(0, 59, 4)}`);
      add(0.4, () => `BYHOUR=${some(0, 23, 4)}`);
    }
    if (freq === 'YEARLY' || freq === 'MONTHLY' || freq === 'WEEKLY' || freq === 'DAILY') {
      add(0.25, () => `BYHOUR=${some(0, 23, 3)}`);
      add(0.15, () => `BYMINUTE=${some(0, 59, 2)}`);
    }
    // BYSETPOS only where each period holds several candidates; a position past the end of every
    // period would make both implementations search until the year 9999.
    const plainDays = parts.some((p) => /^BYDAY=([A-Z]{2},)+[A-Z]{2}$/.test(p));
    if (
      byCount > 0 &&
      rnd() < 0.3 &&
      (freq === 'MONTHLY' || freq === 'YEARLY' || (freq === 'WEEKLY' && plainDays))
    ) {
      parts.push(`BYSETPOS=${some(1, 2, 2, true)}`);
    }
    const year = int(2012, 2030);
    const month = int(1, 12);
    const day = int(1, 28);
    const hour = rnd() < 0.4 ? int(0, 3) : int(0, 23);
    const minute = pick([0, 15, 30, 45]);
    const start = `${year}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:00`;
    const end = rnd();
    if (end < 0.4) {
      parts.push(`COUNT=${int(1, 40)}`);
    } else if (end < 0.7) {
      const until = new Date(
        Date.UTC(year, month - 1, day) + int(1, freq === 'MINUTELY' ? 3 : 900) * 86_400_000,
      );
      parts.push(
        `UNTIL=${until
          .toISOString()
          .replace(/[-:]/g, '')
          .replace(/\.\d{3}/, '')}`,
      );
    }
    cases.push({ rule: parts.join(';'), start, tz: pick(ZONES), limit: 40, cutoff: '2200-01-01T00:00:00Z' });
  }
  return cases;
}
