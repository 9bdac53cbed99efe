import { CalgateError, newId } from '@calgate/core';
import type pg from 'pg';
import type { Database } from '../db.ts';
import { FOREIGN_KEY_VIOLATION, ms, pgCode, quoted } from '../sql.ts';
import { MAX_RULES_PER_TENANT, type NewRule, type RuleChanges, type RuleRecord } from './model.ts';
import { cleanQuery, cleanWeight, projectNotFound, ruleNotFound } from './validation.ts';

interface RuleRow {
  id: string;
  tenant_id: string;
  project_id: string;
  query: string;
  weight: number;
  enabled: boolean;
  created_by_key_id: string | null;
  created_by_user_id: string | null;
  created_at: number;
  updated_at: number;
}

const RULE_COLUMNS = `r.id, r.tenant_id, r.project_id, r.query, r.weight, r.enabled, r.created_by_key_id,
  r.created_by_user_id, ${ms('r.created_at', 'created_at')}, ${ms('r.updated_at', 'updated_at')}`;

function rule(row: RuleRow): RuleRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    projectId: row.project_id,
    query: row.query,
    weight: row.weight,
    enabled: row.enabled,
    createdByKeyId: row.created_by_key_id,
    createdByUserId: row.created_by_user_id,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** The tenant's rules, shared by all its keys; each files the occurrences it matches into one project. */
export class RuleRepository {
  readonly #pool: pg.Pool;

  constructor(db: Database) {
    this.#pool = db.pool;
  }

  /**
   * Saves a rule. The project must be the tenant's and not archived (`not_found` /
   * `precondition_failed`); the author must be one key or one user of the tenant.
   */
  async create(tenantId: string, input: NewRule): Promise<RuleRecord> {
    const query = cleanQuery(input.query);
    const weight = cleanWeight(input.weight ?? 1);
    const enabled = input.enabled ?? true;
    const author = input.createdBy as { keyId?: unknown; userId?: unknown };
    const keyId = typeof author.keyId === 'string' ? author.keyId : null;
    const userId = typeof author.userId === 'string' ? author.userId : null;
    if ((keyId === null) === (userId === null)) {
      throw new CalgateError('invalid_argument', 'A rule is written by exactly one API key or one user.');
    }
    await this.#checkProject(tenantId, input.projectId);
    const { rows: checks } = await this.#pool.query<{ rules: number; author: boolean }>(
      `SELECT (SELECT count(*)::int FROM rules WHERE tenant_id = $1) AS rules,
              CASE WHEN $2::text IS NOT NULL
                   THEN EXISTS (SELECT 1 FROM api_keys WHERE tenant_id = $1 AND id = $2)
                   ELSE EXISTS (SELECT 1 FROM users WHERE tenant_id = $1 AND id = $3) END AS author`,
      [tenantId, keyId, userId],
    );
    const check = checks[0];
    if (check === undefined || !check.author) {
      throw new CalgateError(
        'not_found',
        keyId === null ? `No user ${userId} in this tenant.` : `No API key ${keyId} in this tenant.`,
      );
    }
    if (check.rules >= MAX_RULES_PER_TENANT) {
      throw new CalgateError(
        'precondition_failed',
        `This tenant already has ${MAX_RULES_PER_TENANT} rules, the most allowed; delete unused ones first.`,
      );
    }
    try {
      const { rows } = await this.#pool.query<RuleRow>(
        `INSERT INTO rules AS r (id, tenant_id, project_id, query, weight, enabled, created_by_key_id, created_by_user_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         RETURNING ${RULE_COLUMNS}`,
        [newId('rul'), tenantId, input.projectId, query, weight, enabled, keyId, userId],
      );
      return rule(rows[0] as RuleRow);
    } catch (error) {
      throw pgCode(error).code === FOREIGN_KEY_VIOLATION ? projectNotFound(input.projectId) : error;
    }
  }

  /** Oldest first; optionally only one project's, or only enabled (or disabled) ones. */
  async list(
    tenantId: string,
    filter: { projectId?: string; enabled?: boolean } = {},
  ): Promise<RuleRecord[]> {
    const { rows } = await this.#pool.query<RuleRow>(
      `SELECT ${RULE_COLUMNS} FROM rules r
        WHERE r.tenant_id = $1 AND ($2::text IS NULL OR r.project_id = $2)
          AND ($3::boolean IS NULL OR r.enabled = $3)
        ORDER BY r.created_at, r.id`,
      [tenantId, filter.projectId ?? null, filter.enabled ?? null],
    );
    return rows.map(rule);
  }

  /** The rules that vote: enabled, of projects that are not archived. Oldest first. */
  async voting(tenantId: string): Promise<RuleRecord[]> {
    const { rows } = await this.#pool.query<RuleRow>(
      `SELECT ${RULE_COLUMNS} FROM rules r
         JOIN projects p ON p.id = r.project_id AND p.tenant_id = r.tenant_id
        WHERE r.tenant_id = $1 AND r.enabled AND p.archived_at IS NULL
        ORDER BY r.created_at, r.id`,
      [tenantId],
    );
    return rows.map(rule);
  }

  async get(tenantId: string, ruleId: string): Promise<RuleRecord | null> {
    const { rows } = await this.#pool.query<RuleRow>(
      `SELECT ${RULE_COLUMNS} FROM rules r WHERE r.tenant_id = $1 AND r.id = $2`,
      [tenantId, ruleId],
    );
    const [row] = rows;
    return row === undefined ? null : rule(row);
  }

  /** Changes a rule's query, project, weight or enabled; a new project is checked as in `create`. */
  async update(tenantId: string, ruleId: string, changes: RuleChanges): Promise<RuleRecord> {
    const query = changes.query === undefined ? null : cleanQuery(changes.query);
    const weight = changes.weight === undefined ? null : cleanWeight(changes.weight);
    const projectId = changes.projectId ?? null;
    if (projectId !== null) {
      await this.#checkProject(tenantId, projectId);
    }
    try {
      const { rows } = await this.#pool.query<RuleRow>(
        `UPDATE rules AS r SET
            query = coalesce($3, query),
            weight = coalesce($4, weight),
            project_id = coalesce($5, project_id),
            enabled = coalesce($6, enabled),
            updated_at = now()
          WHERE r.tenant_id = $1 AND r.id = $2
          RETURNING ${RULE_COLUMNS}`,
        [tenantId, ruleId, query, weight, projectId, changes.enabled ?? null],
      );
      const [row] = rows;
      if (row === undefined) {
        throw ruleNotFound(ruleId);
      }
      return rule(row);
    } catch (error) {
      throw pgCode(error).code === FOREIGN_KEY_VIOLATION && projectId !== null
        ? projectNotFound(projectId)
        : error;
    }
  }

  async setEnabled(tenantId: string, ruleId: string, enabled: boolean): Promise<RuleRecord> {
    return this.update(tenantId, ruleId, { enabled });
  }

  /**
   * Deletes a rule and returns it. Classifications it helped make stay as they are until the
   * rules are applied again.
   */
  async delete(tenantId: string, ruleId: string): Promise<RuleRecord> {
    const { rows } = await this.#pool.query<RuleRow>(
      `DELETE FROM rules AS r WHERE r.tenant_id = $1 AND r.id = $2 RETURNING ${RULE_COLUMNS}`,
      [tenantId, ruleId],
    );
    const [row] = rows;
    if (row === undefined) {
      throw ruleNotFound(ruleId);
    }
    return rule(row);
  }

  async #checkProject(tenantId: string, projectId: string): Promise<void> {
    const { rows } = await this.#pool.query<{ name: string; archived: boolean }>(
      'SELECT name, archived_at IS NOT NULL AS archived FROM projects WHERE tenant_id = $1 AND id = $2',
      [tenantId, projectId],
    );
    const [found] = rows;
    if (found === undefined) {
      throw projectNotFound(projectId);
    }
    if (found.archived) {
      throw new CalgateError(
        'precondition_failed',
        `Project ${quoted(found.name)} (${projectId}) is archived; unarchive it before filing time into it.`,
      );
    }
  }
}
