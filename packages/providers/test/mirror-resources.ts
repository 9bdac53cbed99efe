/**
 * Google resources of mirrored calendars for listing tests: seeded, so every run stores the same
 * events. Singles (one in eight all-day) over 2026, weekly series with a moved and a cancelled
 * week each.
 */
const DAY = 86_400_000;
const YEAR = Date.UTC(2026, 0, 1);
const WORDS = ['budget', 'retro', 'réunion', 'zürich', 'standup', 'café', 'review', 'plan'];

/** A deterministic pseudo-random sequence. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const day = (ms: number) => iso(ms).slice(0, 10);
const key = (ms: number) => iso(ms).replace(/[-:]/g, '');

/** Google resources of one calendar: singles (one in eight all-day) and weekly series with exceptions. */
export function resources(seed: number): Record<string, unknown>[] {
  const rand = random(seed);
  const word = () => WORDS[Math.floor(rand() * WORDS.length)] as string;
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < 700; i++) {
    const at = YEAR + Math.floor(rand() * 365) * DAY;
    const base = { id: `s${seed}e${i}`, status: 'confirmed', summary: `${word()} ${word()}`, etag: `"${i}"` };
    out.push(
      i % 8 === 0
        ? { ...base, start: { date: day(at) }, end: { date: day(at + DAY) } }
        : {
            ...base,
            start: { dateTime: iso(at + (6 + (i % 14)) * 3_600_000) },
            end: { dateTime: iso(at + (7 + (i % 14)) * 3_600_000) },
          },
    );
  }
  for (let m = 0; m < 12; m++) {
    const first = YEAR + Math.floor(rand() * 200) * DAY + 9 * 3_600_000;
    const id = `s${seed}m${m}`;
    out.push({
      id,
      status: 'confirmed',
      etag: `"m${m}"`,
      summary: `${word()} weekly`,
      start: { dateTime: iso(first), timeZone: 'UTC' },
      end: { dateTime: iso(first + 3_600_000), timeZone: 'UTC' },
      recurrence: [`RRULE:FREQ=WEEKLY;COUNT=${10 + m * 3}`],
    });
    const moved = first + 7 * DAY * 2;
    out.push({
      id: `${id}_${key(moved)}`,
      recurringEventId: id,
      originalStartTime: { dateTime: iso(moved), timeZone: 'UTC' },
      status: 'confirmed',
      etag: `"x${m}"`,
      summary: m % 2 === 0 ? `${word()} moved` : 'unrelated',
      start: { dateTime: iso(moved + 40 * DAY) },
      end: { dateTime: iso(moved + 40 * DAY + 3_600_000) },
    });
    const cancelled = first + 7 * DAY * 3;
    out.push({
      id: `${id}_${key(cancelled)}`,
      recurringEventId: id,
      originalStartTime: { dateTime: iso(cancelled), timeZone: 'UTC' },
      status: 'cancelled',
    });
  }
  return out;
}
