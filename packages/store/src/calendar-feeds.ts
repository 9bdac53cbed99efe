import { createHash, randomBytes } from 'node:crypto';
import { newId } from '@calgate/core';
import type { Database } from './db.ts';

/** A live secret feed of a calendar, as the dashboard shows it (never its token). */
export interface CalendarFeedRecord {
  id: string;
  calendarId: string;
  createdAt: Date;
  createdBy: string | null;
}

/** A feed a token opened: whose calendar to serve. */
export interface OpenedFeed {
  id: string;
  tenantId: string;
  calendarId: string;
}

const TOKEN_PREFIX = 'cgf_';
const TOKEN_SHAPE = /^cgf_[A-Za-z0-9_-]{43}$/;

function hashOf(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Secret iCalendar feed addresses, one live feed per calendar. The token (32 random bytes) is
 * shown once when made and kept only as its SHA-256 hash; making a new feed revokes the old.
 */
export class CalendarFeedRepository {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** Makes the calendar's feed (revoking a live one in the same transaction); returns its token once. */
  async create(
    tenantId: string,
    calendarId: string,
    createdBy: string | null,
  ): Promise<{ feed: CalendarFeedRecord; token: string }> {
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const id = newId('fed');
    const client = await this.#db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `UPDATE calendar_feeds SET revoked_at = now()
          WHERE tenant_id = $1 AND calendar_id = $2 AND revoked_at IS NULL`,
        [tenantId, calendarId],
      );
      const { rows } = await client.query<{ created_at: Date }>(
        `INSERT INTO calendar_feeds (id, tenant_id, calendar_id, token_hash, created_by)
         VALUES ($1, $2, $3, $4, $5) RETURNING created_at`,
        [id, tenantId, calendarId, hashOf(token), createdBy],
      );
      await client.query('COMMIT');
      const createdAt = rows[0]?.created_at ?? new Date();
      return { feed: { id, calendarId, createdAt, createdBy }, token };
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }

  /** The calendar's live feed, if it has one. */
  async live(tenantId: string, calendarId: string): Promise<CalendarFeedRecord | null> {
    const { rows } = await this.#db.pool.query<{ id: string; created_at: Date; created_by: string | null }>(
      `SELECT id, created_at, created_by FROM calendar_feeds
        WHERE tenant_id = $1 AND calendar_id = $2 AND revoked_at IS NULL`,
      [tenantId, calendarId],
    );
    const [row] = rows;
    return row === undefined
      ? null
      : { id: row.id, calendarId, createdAt: row.created_at, createdBy: row.created_by };
  }

  /** Revokes the calendar's live feed; false when it had none. */
  async revoke(tenantId: string, calendarId: string): Promise<boolean> {
    const { rowCount } = await this.#db.pool.query(
      `UPDATE calendar_feeds SET revoked_at = now()
        WHERE tenant_id = $1 AND calendar_id = $2 AND revoked_at IS NULL`,
      [tenantId, calendarId],
    );
    return (rowCount ?? 0) > 0;
  }

  /** The live feed a token opens; null for a malformed, unknown or revoked token. */
  async open(token: string): Promise<OpenedFeed | null> {
    if (!TOKEN_SHAPE.test(token)) {
      return null;
    }
    const { rows } = await this.#db.pool.query<{ id: string; tenant_id: string; calendar_id: string }>(
      `SELECT id, tenant_id, calendar_id FROM calendar_feeds WHERE token_hash = $1 AND revoked_at IS NULL`,
      [hashOf(token)],
    );
    const [row] = rows;
    return row === undefined ? null : { id: row.id, tenantId: row.tenant_id, calendarId: row.calendar_id };
  }
}
