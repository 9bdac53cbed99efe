/** Small measuring helpers for the mirror benchmark. */
import { MirrorRepository } from '@calgate/store';
import type pg from 'pg';

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export const median = (values: readonly number[]) => percentile(values, 50);
export const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(0));

/** Runs `work` `times` times in sequence and returns each run's wall time in milliseconds. */
export async function timed(times: number, work: (i: number) => Promise<void>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    await work(i);
    out.push(performance.now() - started);
  }
  return out;
}

/**
 * A MirrorRepository whose every query is run as EXPLAIN (ANALYZE, BUFFERS) instead, the plan
 * kept in `plans` and no rows returned: the plan of exactly the SQL the repository sends, with
 * no copy of it here to drift.
 */
export function explainingMirror(pool: pg.Pool, plans: string[]): MirrorRepository {
  const query = async (sql: string, params: unknown[]) => {
    const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
    plans.push(rows.map((row) => row['QUERY PLAN']).join('\n'));
    return { rows: [] };
  };
  // Only `query` is called by search and read; the rest of pg.Pool is not needed here.
  return new MirrorRepository({ pool: { query } as unknown as pg.Pool });
}

/** Which mirror indexes a plan reads, by name. */
export function indexesIn(plan: string): string[] {
  return [...new Set(plan.match(/mirror_events_\w+/g) ?? [])].filter(
    (name) => name.endsWith('idx') || name.endsWith('pkey'),
  );
}
