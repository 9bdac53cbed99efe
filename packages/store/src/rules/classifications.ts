import { CalgateError } from '@calgate/core';
import type pg from 'pg';
import type { Database } from '../db.ts';
import { FOREIGN_KEY_VIOLATION, ms, pgCode, quoted } from '../sql.ts';
import type {
  ClassificationDecision,
  ClassificationFilter,
  ClassificationRecord,
  ClassificationSource,
  ManualDecision,
  Occurrence,
  RuleApplication,
  RuleVerdict,
} from './model.ts';
import { calendarNotFound, cleanEventId, cleanTimes, projectNotFound } from './validation.ts';

interface ClassificationRow {
  tenant_id: string;
  calendar_id: string;
  event_id: string;
  project_id: string | null;
  skip: boolean;
  source: ClassificationSource;
  confidence: number;
  needs_review: boolean;
  start_at: number;
  end_at: number;
  rule_ids: string[];
  updated_at: number;
}

const CLASSIFICATION_COLUMNS = `c.tenant_id, c.calendar_id, c.event_id, c.project_id, c.skip, c.source, c.confidence,
  c.needs_review, ${ms('c.start_at', 'start_at')}, ${ms('c.end_at', 'end_at')}, c.rule_ids, ${ms('c.updated_at', 'updated_at')}`;

function classification(row: ClassificationRow): ClassificationRecord {
  return {
    tenantId: row.tenant_id,
    calendarId: row.calendar_id,
    eventId: row.event_id,
    projectId: row.project_id,
    skip: row.skip,
    source: row.source,
    confidence: Number(row.confidence),
    needsReview: row.needs_review,
    start: new Date(row.start_at),
    end: new Date(row.end_at),
    ruleIds: row.rule_ids,
    updatedAt: new Date(row.updated_at),
  };
}

const decision = (value: { projectId: string | null; skip: boolean; needsReview: boolean }) => ({
  projectId: value.projectId,
  skip: value.skip,
  needsReview: value.needsReview,
});

const sameDecision = (a: ClassificationDecision, b: ClassificationDecision) =>
  a.projectId === b.projectId && a.skip === b.skip && a.needsReview === b.needsReview;

// A batch travels as one JSON parameter, unpacked by jsonb_to_recordset.
const BATCH = `jsonb_to_recordset($2::jsonb) AS x(calendar_id text, event_id text, project_id text,
  confidence real, needs_review boolean, start_at timestamptz, end_at timestamptz, rule_ids text[])`;

/** How each event occurrence is filed; rules never overwrite what a person decided. */
export class ClassificationRepository {
  readonly #pool: pg.Pool;

  constructor(db: Database) {
    this.#pool = db.pool;
  }

  /**
   * Stores what scoring the rules decided for a batch of occurrences, in one transaction. A
   * manual classification is never changed (its start and end follow the occurrence, nothing
   * else); every other occurrence takes the verdict, pending included. Calendars and projects
   * must be the tenant's (`not_found` otherwise, and nothing is written); an occurrence may
   * appear once per batch.
   */
  async upsertFromRules(tenantId: string, verdicts: readonly RuleVerdict[]): Promise<RuleApplication> {
    const report: RuleApplication = { created: 0, changed: 0, unchanged: 0, keptManual: 0, changes: [] };
    if (verdicts.length === 0) {
      return report;
    }
    const items = [...verdicts].map(checkVerdict).sort(byOccurrence);
    for (let i = 1; i < items.length; i += 1) {
      const [a, b] = [items[i - 1], items[i]];
      if (a !== undefined && b !== undefined && byOccurrence(a, b) === 0) {
        throw new CalgateError(
          'invalid_argument',
          `Event ${b.eventId} of calendar ${b.calendarId} appears twice in one batch.`,
        );
      }
    }
    const batch = JSON.stringify(
      items.map((item) => ({
        calendar_id: item.calendarId,
        event_id: item.eventId,
        project_id: item.projectId,
        confidence: item.confidence,
        needs_review: item.needsReview,
        start_at: item.start.toISOString(),
        end_at: item.end.toISOString(),
        rule_ids: item.ruleIds,
      })),
    );
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      await checkOwned(
        client,
        tenantId,
        'calendars',
        unique(items.map((item) => item.calendarId)),
        calendarNotFound,
      );
      const projectIds = unique(items.flatMap((item) => (item.projectId === null ? [] : [item.projectId])));
      await checkOwned(client, tenantId, 'projects', projectIds, projectNotFound);
      const { rows: before } = await client.query<ClassificationRow>(
        `SELECT ${CLASSIFICATION_COLUMNS} FROM classifications c
           JOIN ${BATCH} ON c.calendar_id = x.calendar_id AND c.event_id = x.event_id
          WHERE c.tenant_id = $1
          ORDER BY c.calendar_id, c.event_id
          FOR UPDATE OF c`,
        [tenantId, batch],
      );
      await client.query(
        `INSERT INTO classifications AS c
              (tenant_id, calendar_id, event_id, project_id, skip, source, confidence, needs_review, start_at, end_at, rule_ids)
         SELECT $1, x.calendar_id, x.event_id, x.project_id, false, 'rule', x.confidence, x.needs_review,
                x.start_at, x.end_at, x.rule_ids
           FROM ${BATCH}
         ON CONFLICT (tenant_id, calendar_id, event_id) DO UPDATE SET
              project_id = EXCLUDED.project_id, skip = false, confidence = EXCLUDED.confidence,
              needs_review = EXCLUDED.needs_review, start_at = EXCLUDED.start_at, end_at = EXCLUDED.end_at,
              rule_ids = EXCLUDED.rule_ids, updated_at = now()
          WHERE c.source = 'rule'
            AND (c.project_id, c.skip, c.confidence, c.needs_review, c.start_at, c.end_at, c.rule_ids)
                IS DISTINCT FROM (EXCLUDED.project_id, false, EXCLUDED.confidence, EXCLUDED.needs_review,
                                  EXCLUDED.start_at, EXCLUDED.end_at, EXCLUDED.rule_ids)`,
        [tenantId, batch],
      );
      await client.query(
        `UPDATE classifications AS c SET start_at = x.start_at, end_at = x.end_at, updated_at = now()
           FROM ${BATCH}
          WHERE c.tenant_id = $1 AND c.calendar_id = x.calendar_id AND c.event_id = x.event_id
            AND c.source = 'manual' AND (c.start_at, c.end_at) IS DISTINCT FROM (x.start_at, x.end_at)`,
        [tenantId, batch],
      );
      await client.query('COMMIT');
      const previous = new Map(
        before.map((row) => [`${row.calendar_id}\u0000${row.event_id}`, classification(row)]),
      );
      for (const item of items) {
        const old = previous.get(`${item.calendarId}\u0000${item.eventId}`);
        const after = decision({ projectId: item.projectId, skip: false, needsReview: item.needsReview });
        if (old?.source === 'manual') {
          report.keptManual += 1;
        } else if (old === undefined) {
          report.created += 1;
          report.changes.push({ calendarId: item.calendarId, eventId: item.eventId, before: null, after });
        } else if (sameDecision(decision(old), after)) {
          report.unchanged += 1;
        } else {
          report.changed += 1;
          report.changes.push({
            calendarId: item.calendarId,
            eventId: item.eventId,
            before: decision(old),
            after,
          });
        }
      }
      return report;
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * Files one occurrence by hand (a project of the tenant that is not archived, or skip). It
   * replaces whatever was there, rule or manual, and no later application of the rules changes it.
   */
  async setManual(
    tenantId: string,
    occurrence: Occurrence,
    choice: ManualDecision,
  ): Promise<ClassificationRecord> {
    const [record] = await this.setManualMany(tenantId, [occurrence], choice);
    return record as ClassificationRecord;
  }

  /**
   * Files occurrences by hand, all alike (every occurrence of a series in a range), in one
   * transaction: either all are filed or, on any error, none. An occurrence may appear once.
   */
  async setManualMany(
    tenantId: string,
    occurrences: readonly Occurrence[],
    choice: ManualDecision,
  ): Promise<ClassificationRecord[]> {
    const items = occurrences.map((occurrence) => {
      const eventId = cleanEventId(occurrence.eventId);
      cleanTimes(occurrence);
      return { ...occurrence, eventId };
    });
    const projectId = 'projectId' in choice ? choice.projectId : null;
    if (projectId === null && !('skip' in choice && choice.skip === true)) {
      throw new CalgateError('invalid_argument', 'A manual classification names a project or is skip.');
    }
    const sorted = [...items].sort(byOccurrence);
    for (let i = 1; i < sorted.length; i += 1) {
      const [a, b] = [sorted[i - 1], sorted[i]];
      if (a !== undefined && b !== undefined && byOccurrence(a, b) === 0) {
        throw new CalgateError(
          'invalid_argument',
          `Event ${b.eventId} of calendar ${b.calendarId} appears twice in one batch.`,
        );
      }
    }
    if (sorted.length === 0) {
      return [];
    }
    const batch = JSON.stringify(
      sorted.map((item) => ({
        calendar_id: item.calendarId,
        event_id: item.eventId,
        start_at: item.start.toISOString(),
        end_at: item.end.toISOString(),
      })),
    );
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      await checkOwned(
        client,
        tenantId,
        'calendars',
        unique(sorted.map((item) => item.calendarId)),
        calendarNotFound,
      );
      if (projectId !== null) {
        const { rows: found } = await client.query<{ name: string; archived: boolean }>(
          'SELECT name, archived_at IS NOT NULL AS archived FROM projects WHERE tenant_id = $1 AND id = $2',
          [tenantId, projectId],
        );
        const project = found[0];
        if (project === undefined) {
          throw projectNotFound(projectId);
        }
        if (project.archived) {
          throw new CalgateError(
            'precondition_failed',
            `Project ${quoted(project.name)} (${projectId}) is archived; unarchive it before filing time into it.`,
          );
        }
      }
      const { rows } = await client.query<ClassificationRow>(
        `INSERT INTO classifications AS c
              (tenant_id, calendar_id, event_id, project_id, skip, source, confidence, needs_review, start_at, end_at, rule_ids)
         SELECT $1, x.calendar_id, x.event_id, $3::text, $4::boolean, 'manual', 1, false, x.start_at, x.end_at, '{}'
           FROM jsonb_to_recordset($2::jsonb) AS x(calendar_id text, event_id text, start_at timestamptz, end_at timestamptz)
         ON CONFLICT (tenant_id, calendar_id, event_id) DO UPDATE SET
              project_id = EXCLUDED.project_id, skip = EXCLUDED.skip, source = 'manual', confidence = 1,
              needs_review = false, start_at = EXCLUDED.start_at, end_at = EXCLUDED.end_at, rule_ids = '{}',
              updated_at = now()
         RETURNING ${CLASSIFICATION_COLUMNS}`,
        [tenantId, batch, projectId, projectId === null],
      );
      await client.query('COMMIT');
      const filed = new Map(
        rows.map((row) => [`${row.calendar_id}\u0000${row.event_id}`, classification(row)]),
      );
      return items.flatMap((item) => filed.get(`${item.calendarId}\u0000${item.eventId}`) ?? []);
    } catch (error) {
      await client.query('ROLLBACK');
      if (pgCode(error).code === FOREIGN_KEY_VIOLATION) {
        const first = sorted[0] as (typeof sorted)[number];
        throw pgCode(error).constraint === 'classifications_calendar_id_tenant_id_fkey' || projectId === null
          ? calendarNotFound(first.calendarId)
          : projectNotFound(projectId);
      }
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * Removes the classifications of these occurrences of one calendar, manual or not, so the rules
   * decide again. Returns how many there were.
   */
  async clear(tenantId: string, calendarId: string, eventIds: readonly string[]): Promise<number> {
    if (eventIds.length === 0) {
      return 0;
    }
    const { rowCount } = await this.#pool.query(
      'DELETE FROM classifications WHERE tenant_id = $1 AND calendar_id = $2 AND event_id = ANY($3::text[])',
      [tenantId, calendarId, [...eventIds]],
    );
    return rowCount ?? 0;
  }

  /**
   * The classifications of occurrences on `calendarIds` overlapping [timeMin, timeMax) (an
   * occurrence without duration counts when it starts inside), by start, calendar and event.
   */
  async listInRange(
    tenantId: string,
    calendarIds: readonly string[],
    timeMin: Date,
    timeMax: Date,
    filter: ClassificationFilter = {},
  ): Promise<ClassificationRecord[]> {
    if (calendarIds.length === 0) {
      return [];
    }
    const { rows } = await this.#pool.query<ClassificationRow>(
      `SELECT ${CLASSIFICATION_COLUMNS} FROM classifications c
        WHERE c.tenant_id = $1 AND c.calendar_id = ANY($2::text[])
          AND c.start_at < $4 AND (c.end_at > $3 OR (c.end_at = c.start_at AND c.start_at >= $3))
          AND ($5::text IS NULL OR c.project_id = $5)
          AND ($6::text IS NULL OR c.source = $6)
          AND ($7::boolean IS NULL OR c.needs_review = $7)
        ORDER BY c.start_at, c.calendar_id, c.event_id`,
      [
        tenantId,
        [...calendarIds],
        timeMin,
        timeMax,
        filter.projectId ?? null,
        filter.source ?? null,
        filter.needsReview ?? null,
      ],
    );
    return rows.map(classification);
  }

  /** The classifications of these occurrences of one calendar, by event id; absent ones are unclassified. */
  async getMany(
    tenantId: string,
    calendarId: string,
    eventIds: readonly string[],
  ): Promise<Map<string, ClassificationRecord>> {
    if (eventIds.length === 0) {
      return new Map();
    }
    const { rows } = await this.#pool.query<ClassificationRow>(
      `SELECT ${CLASSIFICATION_COLUMNS} FROM classifications c
        WHERE c.tenant_id = $1 AND c.calendar_id = $2 AND c.event_id = ANY($3::text[])`,
      [tenantId, calendarId, [...eventIds]],
    );
    return new Map(rows.map((row) => [row.event_id, classification(row)]));
  }
}

function checkVerdict(verdict: RuleVerdict): RuleVerdict {
  cleanEventId(verdict.eventId);
  cleanTimes(verdict);
  const { confidence } = verdict;
  if (typeof confidence !== 'number' || !(confidence >= 0 && confidence <= 1)) {
    throw new CalgateError(
      'invalid_argument',
      `Confidence of event ${verdict.eventId} must be from 0 to 1, got ${String(confidence)}.`,
    );
  }
  if (!Array.isArray(verdict.ruleIds) || verdict.ruleIds.some((id) => typeof id !== 'string')) {
    throw new CalgateError(
      'invalid_argument',
      `The voting rules of event ${verdict.eventId} must be rule ids.`,
    );
  }
  return verdict;
}

function byOccurrence(a: Occurrence, b: Occurrence): number {
  if (a.calendarId !== b.calendarId) {
    return a.calendarId < b.calendarId ? -1 : 1;
  }
  return a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0;
}

const unique = (values: readonly string[]) => [...new Set(values)];

async function checkOwned(
  client: pg.PoolClient,
  tenantId: string,
  table: 'calendars' | 'projects',
  ids: readonly string[],
  missing: (id: string) => CalgateError,
): Promise<void> {
  if (ids.length === 0) {
    return;
  }
  const { rows } = await client.query<{ id: string }>(
    `SELECT id FROM ${table} WHERE tenant_id = $1 AND id = ANY($2::text[])`,
    [tenantId, [...ids]],
  );
  const known = new Set(rows.map((row) => row.id));
  const absent = ids.find((id) => !known.has(id));
  if (absent !== undefined) {
    throw missing(absent);
  }
}
