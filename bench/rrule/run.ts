// Expands rules to 10,000 instances with Calgate's RFC 5545 engine (target ≤ 20 ms each) and the
// same rules with the `rrule` npm package, in UTC and in America/New_York: medians of repeated
// runs, and how many instants the two disagree on. Appends the table to bench/results/rrule.md.
import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { expandRule, parseRRule } from '@calgate/core';
import rrule from 'rrule';
import { machineSummary, today } from '../lib/machine.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const { RRule } = rrule;
const root = fileURLToPath(new URL('../../', import.meta.url));

const RULES = [
  'FREQ=DAILY;COUNT=10000',
  'FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=10000',
  'FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;COUNT=10000',
  'FREQ=HOURLY;INTERVAL=7;COUNT=10000',
  'FREQ=MONTHLY;BYMONTHDAY=-1,15;COUNT=10000',
  'FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;COUNT=100',
];
const ZONES = ['UTC', 'America/New_York'];
const START = { year: 2026, month: 1, day: 5, hour: 9, minute: 30, second: 0 };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function ours(rule: string, zone: string): number[] {
  const parsed = parseRRule(rule);
  if (!parsed.ok) {
    throw parsed.error;
  }
  const expanded = expandRule(parsed.value, START, zone, { maxInstances: 20_000 });
  if (!expanded.ok) {
    throw expanded.error;
  }
  return expanded.value.map((occurrence) => occurrence.instant);
}

/** rrule works on "floating" dates whose UTC fields are the wall clock; tzid converts back. */
function theirs(rule: string, zone: string): number[] {
  const options = RRule.parseString(rule);
  const set = new RRule({
    ...options,
    dtstart: new Date(
      Date.UTC(START.year, START.month - 1, START.day, START.hour, START.minute, START.second),
    ),
    tzid: zone,
  });
  return set.all().map((date) => date.getTime());
}

function time(fn: () => number[]): { ms: number; result: number[] } {
  let result: number[] = [];
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    result = fn();
    samples.push(performance.now() - started);
  }
  return { ms: median(samples), result };
}

const rows: string[] = [];
for (const zone of ZONES) {
  for (const rule of RULES) {
    const a = time(() => ours(rule, zone));
    const b = time(() => theirs(rule, zone));
    const theirsSet = new Set(b.result);
    const oursSet = new Set(a.result);
    const disagreements =
      a.result.filter((instant) => !theirsSet.has(instant)).length +
      b.result.filter((instant) => !oursSet.has(instant)).length;
    rows.push(
      `| ${zone} | \`${rule}\` | ${a.result.length} | ${a.ms.toFixed(2)} | ${b.result.length} | ${b.ms.toFixed(2)} | ${(b.ms / a.ms).toFixed(1)}× | ${disagreements} |`,
    );
  }
}
const header =
  '| zone | rule | instances | Calgate ms | rrule instances | rrule ms | speed-up | instants in one only |';
console.log(`rrule: medians of ${RUNS} runs, DTSTART 2026-01-05 09:30 local, ${machineSummary()}`);
console.log(header);
console.log('|---|---|---|---|---|---|---|---|');
console.log(rows.join('\n'));
if (process.env.BENCH_RECORD !== '0') {
  await mkdir(`${root}bench/results`, { recursive: true });
  await appendFile(
    `${root}bench/results/rrule.md`,
    `\n## ${today()} — ${machineSummary()}\n\nMedians of ${RUNS} runs; DTSTART 2026-01-05 09:30 wall clock in the zone. Target: 10,000 instances ≤ 20 ms.\n\n${header}\n|---|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
  );
}
