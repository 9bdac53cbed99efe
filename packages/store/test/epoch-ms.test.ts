import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EPOCH_MS_TYPES, ms, msInt } from '../src/sql.ts';

describe('instants read as epoch milliseconds', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    // Like every instant column of Calgate's: millisecond precision.
    await db.pool.query('CREATE TABLE instants (at TIMESTAMPTZ(3))');
    // 200,000 instants spread over years 1–9999 (random milliseconds, so most have a fraction
    // of a second), the ends of that range, the epoch and the instants beside it, and whole
    // seconds and .999/.001 fractions where float8 error would show first.
    await db.pool.query(`
      INSERT INTO instants
      SELECT timestamptz '0001-01-01 00:00:00+00' + (random() * 315537897599999) * interval '1 millisecond'
      FROM generate_series(1, 200000);
      INSERT INTO instants VALUES
        ('0001-01-01 00:00:00.000+00'), ('0001-01-01 00:00:00.001+00'), ('9999-12-31 23:59:59.999+00'),
        ('9999-12-31 23:59:59.998+00'), ('1970-01-01 00:00:00.000+00'), ('1969-12-31 23:59:59.999+00'),
        ('1970-01-01 00:00:00.001+00'), ('2026-12-01 09:00:00.000+00'), ('2262-04-11 23:47:16.854+00'),
        ('5000-06-15 12:00:00.999+00'), ('8000-01-01 00:00:00.001+00'), (NULL);
    `);
  });

  afterAll(async () => {
    await db.close();
  });

  it('gives exactly the stored millisecond for every instant of years 1–9999', async () => {
    // The exact value, computed in numeric, against what ms() sends.
    const { rows } = await db.pool.query<{ checked: number; wrong: number; sample: string | null }>(`
      SELECT count(*)::int AS checked,
             count(*) FILTER (WHERE exact IS DISTINCT FROM fast)::int AS wrong,
             min(at::text) FILTER (WHERE exact IS DISTINCT FROM fast) AS sample
      FROM (SELECT at, (extract(epoch FROM at) * 1000)::numeric AS exact, ${ms('at', 'fast')}
            FROM instants) checked
    `);
    expect(rows[0]).toEqual({ checked: 200_012, wrong: 0, sample: null });
  });

  it('gives the same milliseconds as int8 (msInt), read as numbers with EPOCH_MS_TYPES', async () => {
    const { rows } = await db.pool.query<{ checked: number; wrong: number }>(`
      SELECT count(*)::int AS checked,
             count(*) FILTER (WHERE (extract(epoch FROM at) * 1000)::numeric IS DISTINCT FROM fast)::int AS wrong
      FROM (SELECT at, ${msInt('at', 'fast')} FROM instants) checked
    `);
    expect(rows[0]).toEqual({ checked: 200_012, wrong: 0 });
    const sample = await db.pool.query({
      text: `SELECT ${ms('at', 'float')}, ${msInt('at', 'integer')}, 7::int4 AS small FROM instants ORDER BY at NULLS FIRST LIMIT 3000`,
      rowMode: 'array',
      types: EPOCH_MS_TYPES,
    });
    expect(sample.rows[0]).toEqual([null, null, 7]);
    for (const [float, integer] of sample.rows.slice(1)) {
      expect(typeof integer).toBe('number');
      expect(integer).toBe(float);
    }
  });

  it('reaches JavaScript as the same Date the stored text names', async () => {
    const { rows } = await db.pool.query<{ text: string; fast: number }>(
      `SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS text, ${ms('at', 'fast')}
       FROM instants WHERE at >= '1000-01-01' ORDER BY random() LIMIT 5000`,
    );
    expect(rows).toHaveLength(5000);
    for (const row of rows) {
      expect(new Date(row.fast).toISOString()).toBe(row.text);
    }
  });
});
