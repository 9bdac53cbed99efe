import { CalgateError, newId } from '@calgate/core';
import type pg from 'pg';
import type { Database } from '../db.ts';
import { cleanText, FOREIGN_KEY_VIOLATION, ms, pgCode, quoted, UNIQUE_VIOLATION } from '../sql.ts';
import {
  MAX_PROJECTS_PER_TENANT,
  type NewProject,
  PROJECT_CLIENT_MAX,
  PROJECT_COLOURS,
  PROJECT_NAME_MAX,
  type ProjectChanges,
  type ProjectRecord,
} from './model.ts';
import { cleanColour, projectNotFound } from './validation.ts';

interface ProjectRow {
  id: string;
  tenant_id: string;
  name: string;
  client: string | null;
  colour: string;
  archived_at: number | null;
  created_at: number;
  updated_at: number;
}

const PROJECT_COLUMNS = `id, tenant_id, name, client, colour, ${ms('archived_at')}, ${ms('created_at')}, ${ms('updated_at')}`;

function project(row: ProjectRow): ProjectRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    client: row.client,
    colour: row.colour,
    archived: row.archived_at !== null,
    archivedAt: row.archived_at === null ? null : new Date(row.archived_at),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** The tenant's projects: names unique whatever their case, archived ones kept with their history. */
export class ProjectRepository {
  readonly #pool: pg.Pool;

  constructor(db: Database) {
    this.#pool = db.pool;
  }

  async create(tenantId: string, input: NewProject): Promise<ProjectRecord> {
    const name = cleanText(input.name, 'Project name', PROJECT_NAME_MAX);
    const client = input.client == null ? null : cleanText(input.client, 'Client', PROJECT_CLIENT_MAX);
    const given = input.colour === undefined ? null : cleanColour(input.colour);
    const { rows: stats } = await this.#pool.query<{ total: number; colours: string[] }>(
      `SELECT count(*)::int AS total,
              coalesce(array_agg(colour) FILTER (WHERE archived_at IS NULL), '{}') AS colours
         FROM projects WHERE tenant_id = $1`,
      [tenantId],
    );
    const { total, colours } = stats[0] ?? { total: 0, colours: [] };
    if (total >= MAX_PROJECTS_PER_TENANT) {
      throw new CalgateError(
        'precondition_failed',
        `This tenant already has ${MAX_PROJECTS_PER_TENANT} projects, the most allowed; delete unused ones first.`,
      );
    }
    const colour =
      given ??
      PROJECT_COLOURS.find((candidate) => !colours.includes(candidate)) ??
      PROJECT_COLOURS[total % PROJECT_COLOURS.length] ??
      PROJECT_COLOURS[0];
    try {
      const { rows } = await this.#pool.query<ProjectRow>(
        `INSERT INTO projects (id, tenant_id, name, client, colour) VALUES ($1, $2, $3, $4, $5)
         RETURNING ${PROJECT_COLUMNS}`,
        [newId('prj'), tenantId, name, client, colour],
      );
      return project(rows[0] as ProjectRow);
    } catch (error) {
      throw await this.#nameTaken(error, tenantId, name);
    }
  }

  /** By name (case-insensitive order); archived projects only with `includeArchived`. */
  async list(tenantId: string, options: { includeArchived?: boolean } = {}): Promise<ProjectRecord[]> {
    const { rows } = await this.#pool.query<ProjectRow>(
      `SELECT ${PROJECT_COLUMNS} FROM projects
        WHERE tenant_id = $1 AND ($2 OR archived_at IS NULL)
        ORDER BY lower(name), id`,
      [tenantId, options.includeArchived === true],
    );
    return rows.map(project);
  }

  async get(tenantId: string, projectId: string): Promise<ProjectRecord | null> {
    const { rows } = await this.#pool.query<ProjectRow>(
      `SELECT ${PROJECT_COLUMNS} FROM projects WHERE tenant_id = $1 AND id = $2`,
      [tenantId, projectId],
    );
    const [row] = rows;
    return row === undefined ? null : project(row);
  }

  /** Renames, recolours or changes the client; archived projects too. */
  async update(tenantId: string, projectId: string, changes: ProjectChanges): Promise<ProjectRecord> {
    const name =
      changes.name === undefined ? null : cleanText(changes.name, 'Project name', PROJECT_NAME_MAX);
    const clearClient = changes.client === null;
    const client = changes.client == null ? null : cleanText(changes.client, 'Client', PROJECT_CLIENT_MAX);
    const colour = changes.colour === undefined ? null : cleanColour(changes.colour);
    try {
      const { rows } = await this.#pool.query<ProjectRow>(
        `UPDATE projects SET
            name = coalesce($3, name),
            client = CASE WHEN $4 THEN NULL ELSE coalesce($5, client) END,
            colour = coalesce($6, colour),
            updated_at = now()
          WHERE tenant_id = $1 AND id = $2
          RETURNING ${PROJECT_COLUMNS}`,
        [tenantId, projectId, name, clearClient, client, colour],
      );
      const [row] = rows;
      if (row === undefined) {
        throw projectNotFound(projectId);
      }
      return project(row);
    } catch (error) {
      throw name === null ? error : await this.#nameTaken(error, tenantId, name);
    }
  }

  /**
   * Archives a project: it keeps its name, rules and classifications (timesheets still show its
   * time), but its rules stop voting and nothing new can be filed into it. Archiving an archived
   * project keeps its first archivedAt.
   */
  async archive(tenantId: string, projectId: string): Promise<ProjectRecord> {
    return this.#setArchived(tenantId, projectId, true);
  }

  async unarchive(tenantId: string, projectId: string): Promise<ProjectRecord> {
    return this.#setArchived(tenantId, projectId, false);
  }

  /**
   * Deletes a project. Refused (`precondition_failed`, with the rule ids) while any rule files
   * into it; its classifications, manual ones included, are removed, so those occurrences are
   * pending again and the next application of the rules files them anew. Archive a project to
   * keep its history instead.
   */
  async delete(tenantId: string, projectId: string): Promise<{ classificationsCleared: number }> {
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ name: string }>(
        'SELECT name FROM projects WHERE tenant_id = $1 AND id = $2 FOR UPDATE',
        [tenantId, projectId],
      );
      const [found] = rows;
      if (found === undefined) {
        throw projectNotFound(projectId);
      }
      const { rows: rules } = await client.query<{ id: string }>(
        'SELECT id FROM rules WHERE tenant_id = $1 AND project_id = $2 ORDER BY created_at, id',
        [tenantId, projectId],
      );
      if (rules.length > 0) {
        throw stillUsed(
          found.name,
          rules.map((rule) => rule.id),
        );
      }
      const { rowCount } = await client.query(
        'DELETE FROM classifications WHERE tenant_id = $1 AND project_id = $2',
        [tenantId, projectId],
      );
      await client.query('DELETE FROM projects WHERE tenant_id = $1 AND id = $2', [tenantId, projectId]);
      await client.query('COMMIT');
      return { classificationsCleared: rowCount ?? 0 };
    } catch (error) {
      await client.query('ROLLBACK');
      if (pgCode(error).code === FOREIGN_KEY_VIOLATION) {
        throw stillUsed(null, []);
      }
      throw error;
    } finally {
      client.release();
    }
  }

  async #setArchived(tenantId: string, projectId: string, archived: boolean): Promise<ProjectRecord> {
    const { rows } = await this.#pool.query<ProjectRow>(
      `UPDATE projects SET
          archived_at = CASE WHEN $3 THEN coalesce(archived_at, now()) ELSE NULL END,
          updated_at = CASE WHEN (archived_at IS NOT NULL) = $3 THEN updated_at ELSE now() END
        WHERE tenant_id = $1 AND id = $2
        RETURNING ${PROJECT_COLUMNS}`,
      [tenantId, projectId, archived],
    );
    const [row] = rows;
    if (row === undefined) {
      throw projectNotFound(projectId);
    }
    return project(row);
  }

  async #nameTaken(error: unknown, tenantId: string, name: string): Promise<unknown> {
    const { code, constraint } = pgCode(error);
    if (code !== UNIQUE_VIOLATION || constraint !== 'projects_tenant_id_name_key') {
      return error;
    }
    const { rows } = await this.#pool.query<{ id: string; name: string; archived: boolean }>(
      `SELECT id, name, archived_at IS NOT NULL AS archived FROM projects
        WHERE tenant_id = $1 AND lower(name) = lower($2)`,
      [tenantId, name],
    );
    const [taken] = rows;
    const archived = taken?.archived === true ? ' (archived: unarchive it to use it again)' : '';
    return new CalgateError(
      'already_exists',
      `A project named ${quoted(taken?.name ?? name)} already exists in this tenant${archived}; names are unique whatever their case.`,
      { context: taken === undefined ? {} : { projectId: taken.id, archived: taken.archived } },
    );
  }
}

function stillUsed(name: string | null, ruleIds: string[]): CalgateError {
  const what = name === null ? 'This project' : `Project ${quoted(name)}`;
  const count = ruleIds.length === 1 ? 'a rule files' : `${ruleIds.length || 'some'} rules file`;
  return new CalgateError(
    'precondition_failed',
    `${what} cannot be deleted while ${count} time into it; delete those rules or move them to another project first, or archive the project instead.`,
    { context: { ruleIds } },
  );
}
