// The in-process part of get_availability / find_free_slots: 20 calendars × 2,000 events each
// over one year, merged into busy blocks (opaque and full privacy) and free slots within working
// hours. Target ≤ 50 ms. Medians of repeated runs; appends to bench/results/availability.md.
import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { findFreeSlots, type Interval, mergeAvailability } from '@calgate/core';
import { machineSummary, today } from '../lib/machine.ts';

const CALENDARS = 20;
const EVENTS = 2_000;
const RUNS = Number(process.env.BENCH_RUNS ?? 25);
const root = fileURLToPath(new URL('../../', import.meta.url));
const window = { start: Date.parse('2026-01-01T00:00:00Z'), end: Date.parse('2027-01-01T00:00:00Z') };

// A seeded generator: the same events every run and every machine.
let seed = 42;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};
const calendars: Interval[][] = Array.from({ length: CALENDARS }, () =>
  Array.from({ length: EVENTS }, () => {
    const start = window.start + Math.floor((random() * (window.end - window.start)) / 900_000) * 900_000;
    return { start, end: start + (1 + Math.floor(random() * 8)) * 900_000 };
  }),
);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function measure(privacy: 'opaque' | 'full'): { ms: number; blocks: number; slots: number } {
  const samples: number[] = [];
  let blocks = 0;
  let slots = 0;
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const busy = mergeAvailability(calendars, privacy);
    const free = findFreeSlots(window, busy, {
      minDurationMinutes: 30,
      workingHours: {
        days: ['mon', 'tue', 'wed', 'thu', 'fri'],
        start: '09:00',
        end: '17:00',
        timeZone: 'Europe/Berlin',
      },
    });
    samples.push(performance.now() - started);
    blocks = busy.length;
    slots = free.ok ? free.value.length : -1;
  }
  return { ms: median(samples), blocks, slots };
}

const rows = (['opaque', 'full'] as const).map((privacy) => {
  const { ms, blocks, slots } = measure(privacy);
  return `| ${privacy} | ${CALENDARS} × ${EVENTS} | ${blocks} | ${slots} | ${ms.toFixed(2)} |`;
});
const header =
  '| privacy | calendars × events | busy blocks | free slots (≥ 30 min, working hours) | median ms |';
console.log(`availability: medians of ${RUNS} runs, ${machineSummary()}`);
console.log(header);
console.log('|---|---|---|---|---|');
console.log(rows.join('\n'));
if (process.env.BENCH_RECORD !== '0') {
  await mkdir(`${root}bench/results`, { recursive: true });
  await appendFile(
    `${root}bench/results/availability.md`,
    `\n## ${today()} — ${machineSummary()}\n\nIn-process computation of get_availability over one year (about 5 events a day per calendar) (events already fetched). Target ≤ 50 ms.\n\n${header}\n|---|---|---|---|---|\n${rows.join('\n')}\n`,
  );
}
