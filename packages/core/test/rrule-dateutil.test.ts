/**
 * Holds the RRULE engine to python-dateutil on a few hundred generated rules. The rules are
 * random but deterministic (seeded) and valid per RFC 5545; DTSTARTs often sit at night so that
 * DST gaps and overlaps come up. Both sides expand on wall-clock time and read gaps and overlaps
 * by RFC 5545 (see the note in support/dateutil_expand.py), so instant lists must match exactly.
 * DTSTART is compared as dateutil sees it: only when the rule itself produces it
 * (`includeStart: false`); the RFC's "DTSTART is always the first instance" is tested elsewhere.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expandRule, formatInstant, parseRRule } from '../src/index.ts';
import { type Case, generate } from './support/random-rules.ts';

type Reference = { instants: string[] } | { error: string } | { timeout: true };

function runDateutil(cases: Case[]): Reference[] {
  const script = fileURLToPath(new URL('./support/dateutil_expand.py', import.meta.url));
  const result = spawnSync('python3', [script], {
    input: JSON.stringify(cases),
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (result.status !== 0) {
    throw new Error(`python3 failed: ${result.stderr}`);
  }
  return JSON.parse(result.stdout);
}

function runOurs(c: Case): { instants: string[] } | { error: string } {
  const rule = parseRRule(c.rule);
  if (!rule.ok) {
    return { error: rule.error.message };
  }
  const [date, time] = c.start.split('T') as [string, string];
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const [hour, minute, second] = time.split(':').map(Number) as [number, number, number];
  const expanded = expandRule(rule.value, { year, month, day, hour, minute, second }, c.tz, {
    includeStart: false,
    limit: c.limit,
    to: Date.parse(c.cutoff),
    maxInstances: 1_000_000,
  });
  if (!expanded.ok) {
    return { error: expanded.error.message };
  }
  return { instants: expanded.value.map((o) => formatInstant(o.instant)) };
}

describe('RRULE expansion agrees with python-dateutil', () => {
  const cases = generate(400, 20261121);
  const reference = runDateutil(cases);

  it('generates rules that our parser accepts', () => {
    const rejected = cases.filter((c) => !parseRRule(c.rule).ok).map((c) => c.rule);
    expect(rejected).toEqual([]);
  });

  it('produces identical instants for every generated rule', () => {
    const mismatches: unknown[] = [];
    let timeouts = 0;
    cases.forEach((c, i) => {
      const theirs = reference[i];
      const ours = runOurs(c);
      if (theirs === undefined || 'timeout' in theirs) {
        timeouts++;
        return;
      }
      if ('error' in theirs) {
        // dateutil refuses BYxxx values an INTERVAL can never reach; so must we.
        if (!('error' in ours)) {
          mismatches.push({ case: c, theirs, ours: ours.instants.slice(0, 3) });
        }
        return;
      }
      if ('error' in ours || JSON.stringify(ours.instants) !== JSON.stringify(theirs.instants)) {
        mismatches.push({ case: c, theirs, ours });
      }
    });
    expect(mismatches.slice(0, 3)).toEqual([]);
    expect(mismatches.length).toBe(0);
    // dateutil scans to the year 9999 for rules that rarely occur; a handful may time out.
    expect(timeouts).toBeLessThan(5);
  });

  it('covers DST gaps and overlaps and gets non-trivial output', () => {
    const produced = reference.filter((r) => 'instants' in r && r.instants.length > 1).length;
    expect(produced).toBeGreaterThan(300);
  });
});
