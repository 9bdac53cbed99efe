/**
 * Push channels on mirrored calendars (mirror_channels): Google's events.watch today, any
 * provider whose sync source has push hooks. Nothing secret is kept: the
 * channel token is recomputed from the channel id (see the gateway's mirror/channels.ts). The
 * receiver's write is one conditional UPDATE, so two gateways given the same notification (a
 * retry racing the original) accept it once.
 */
import { CalgateError } from '@calgate/core';
import type pg from 'pg';
import type { Database } from '../db.ts';
import { FOREIGN_KEY_VIOLATION, pgCode } from '../sql.ts';

export interface MirrorChannelRow {
  channelId: string;
  tenantId: string;
  calendarId: string;
  resourceId: string;
  /** Epoch milliseconds at which Google stops sending on this channel. */
  expiration: number;
  createdAt: number;
  lastMessageNumber: number;
  lastNotifiedAt: number | null;
}

export interface NewMirrorChannel {
  channelId: string;
  tenantId: string;
  calendarId: string;
  resourceId: string;
  expiration: number;
}

/** The calendar a channel watches, with what a client for its connection needs. */
export interface WatchTarget {
  tenantId: string;
  calendarId: string;
  /** The calendar's id at its provider. */
  externalId: string;
  connectionId: string;
  /** The connection's provider (`connections.provider`): whose push hooks open and stop it. */
  provider: string;
  auth: 'oauth' | 'service_account';
}

/** A channel with its calendar's connection, to stop it at the provider. */
export interface WatchedChannel {
  channel: MirrorChannelRow;
  calendar: WatchTarget;
}

/** What a notification did to its channel: taken (a new message number) or a replay. */
export type NotificationOutcome =
  | { kind: 'accepted'; channel: MirrorChannelRow }
  | { kind: 'replay' }
  | { kind: 'unknown' };

interface RawChannelRow {
  channel_id: string;
  tenant_id: string;
  calendar_id: string;
  resource_id: string;
  expiration: Date;
  created_at: Date;
  last_message_number: string;
  last_notified_at: Date | null;
}

const COLUMNS =
  'channel_id, tenant_id, calendar_id, resource_id, expiration, created_at, last_message_number, last_notified_at';

/**
 * A calendar the mirror syncs with push: enabled, of an active connection that can sign in, of a
 * provider with push channels (`providers`, the query parameter named).
 */
const syncable = (
  providers: string,
) => `c.enabled AND n.provider::text = ANY(${providers}) AND n.status = 'active'
  AND n.auth IN ('oauth', 'service_account')`;

interface RawTargetRow {
  tenant_id: string;
  calendar_id: string;
  external_id: string;
  connection_id: string;
  provider: string;
  auth: 'oauth' | 'service_account';
}

function targetFromRow(row: RawTargetRow): WatchTarget {
  return {
    tenantId: row.tenant_id,
    calendarId: row.calendar_id,
    externalId: row.external_id,
    connectionId: row.connection_id,
    provider: row.provider,
    auth: row.auth,
  };
}

const CHANNEL_WITH_TARGET = `${COLUMNS.split(', ')
  .map((column) => `m.${column}`)
  .join(', ')}, c.external_id, c.connection_id, n.provider::text AS provider, n.auth::text AS auth`;

function watchedFromRow(row: RawChannelRow & RawTargetRow): WatchedChannel {
  return { channel: fromRow(row), calendar: targetFromRow(row) };
}

function fromRow(row: RawChannelRow): MirrorChannelRow {
  return {
    channelId: row.channel_id,
    tenantId: row.tenant_id,
    calendarId: row.calendar_id,
    resourceId: row.resource_id,
    expiration: row.expiration.getTime(),
    createdAt: row.created_at.getTime(),
    lastMessageNumber: Number(row.last_message_number),
    lastNotifiedAt: row.last_notified_at?.getTime() ?? null,
  };
}

export class MirrorChannelRepository {
  readonly #pool: pg.Pool;
  readonly #providers: string[];

  /** `providers`: those whose calendars get channels (Google's when not given). */
  constructor(db: Pick<Database, 'pool'>, options: { providers?: readonly string[] } = {}) {
    this.#pool = db.pool;
    this.#providers = [...(options.providers ?? ['google'])];
  }

  async insert(channel: NewMirrorChannel): Promise<MirrorChannelRow> {
    try {
      const { rows } = await this.#pool.query<RawChannelRow>(
        `INSERT INTO mirror_channels (channel_id, tenant_id, calendar_id, resource_id, expiration)
         VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
        [
          channel.channelId,
          channel.tenantId,
          channel.calendarId,
          channel.resourceId,
          new Date(channel.expiration),
        ],
      );
      return fromRow(rows[0] as RawChannelRow);
    } catch (error) {
      if (pgCode(error).code === FOREIGN_KEY_VIOLATION) {
        throw new CalgateError('not_found', `Calendar '${channel.calendarId}' was not found.`);
      }
      throw error;
    }
  }

  async get(channelId: string): Promise<MirrorChannelRow | undefined> {
    const { rows } = await this.#pool.query<RawChannelRow>(
      `SELECT ${COLUMNS} FROM mirror_channels WHERE channel_id = $1`,
      [channelId],
    );
    return rows[0] === undefined ? undefined : fromRow(rows[0]);
  }

  async forCalendar(calendarId: string): Promise<MirrorChannelRow[]> {
    const { rows } = await this.#pool.query<RawChannelRow>(
      `SELECT ${COLUMNS} FROM mirror_channels WHERE calendar_id = $1 ORDER BY created_at, channel_id`,
      [calendarId],
    );
    return rows.map(fromRow);
  }

  /** Channels that end before `before` (epoch ms): the ones to renew now. */
  async expiringBefore(before: number, limit = 100): Promise<MirrorChannelRow[]> {
    const { rows } = await this.#pool.query<RawChannelRow>(
      `SELECT ${COLUMNS} FROM mirror_channels WHERE expiration < $1 ORDER BY expiration LIMIT $2`,
      [new Date(before), limit],
    );
    return rows.map(fromRow);
  }

  /**
   * Calendars that should have a channel and have none that is still open: syncable, and past
   * their first full sync (a channel before it would only announce what the sync reads anyway).
   */
  async unwatched(limit = 100): Promise<WatchTarget[]> {
    const { rows } = await this.#pool.query<RawTargetRow>(
      `SELECT c.tenant_id, c.id AS calendar_id, c.external_id, c.connection_id,
         n.provider::text AS provider, n.auth::text AS auth
       FROM calendars c
       JOIN connections n ON n.id = c.connection_id AND n.tenant_id = c.tenant_id
       JOIN mirror_sync_state s ON s.calendar_id = c.id
       WHERE ${syncable('$2')} AND s.full_sync_at IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM mirror_channels m WHERE m.calendar_id = c.id AND m.expiration > now())
       ORDER BY c.id LIMIT $1`,
      [limit, this.#providers],
    );
    return rows.map(targetFromRow);
  }

  /** Channels of syncable calendars that end before `before` (epoch ms): the ones to renew now. */
  async expiringWatched(before: number, limit = 100): Promise<WatchedChannel[]> {
    const { rows } = await this.#pool.query<RawChannelRow & RawTargetRow>(
      `SELECT ${CHANNEL_WITH_TARGET}
       FROM mirror_channels m
       JOIN calendars c ON c.id = m.calendar_id AND c.tenant_id = m.tenant_id
       JOIN connections n ON n.id = c.connection_id AND n.tenant_id = c.tenant_id
       WHERE ${syncable('$3')} AND m.expiration < $1 ORDER BY m.expiration LIMIT $2`,
      [new Date(before), limit, this.#providers],
    );
    return rows.map(watchedFromRow);
  }

  /** Open channels on calendars the mirror no longer syncs (disabled, account needing reconnection). */
  async unwanted(limit = 100): Promise<WatchedChannel[]> {
    const { rows } = await this.#pool.query<RawChannelRow & RawTargetRow>(
      `SELECT ${CHANNEL_WITH_TARGET}
       FROM mirror_channels m
       JOIN calendars c ON c.id = m.calendar_id AND c.tenant_id = m.tenant_id
       JOIN connections n ON n.id = c.connection_id AND n.tenant_id = c.tenant_id
       WHERE NOT (${syncable('$2')}) ORDER BY m.created_at LIMIT $1`,
      [limit, this.#providers],
    );
    return rows.map(watchedFromRow);
  }

  /** The channels of every calendar of a connection (to stop them when it is disconnected). */
  async forConnection(tenantId: string, connectionId: string): Promise<WatchedChannel[]> {
    const { rows } = await this.#pool.query<RawChannelRow & RawTargetRow>(
      `SELECT ${CHANNEL_WITH_TARGET}
       FROM mirror_channels m
       JOIN calendars c ON c.id = m.calendar_id AND c.tenant_id = m.tenant_id
       JOIN connections n ON n.id = c.connection_id AND n.tenant_id = c.tenant_id
       WHERE c.tenant_id = $1 AND c.connection_id = $2 ORDER BY m.created_at`,
      [tenantId, connectionId],
    );
    return rows.map(watchedFromRow);
  }

  /**
   * Takes a notification's message number if it is above the last one taken; a number at or
   * below it is a replay (Google retries, or a copy someone captured).
   */
  async acceptMessage(channelId: string, messageNumber: number, at: number): Promise<NotificationOutcome> {
    const { rows } = await this.#pool.query<RawChannelRow>(
      `UPDATE mirror_channels SET last_message_number = $2, last_notified_at = $3
       WHERE channel_id = $1 AND last_message_number < $2 RETURNING ${COLUMNS}`,
      [channelId, messageNumber, new Date(at)],
    );
    if (rows[0] !== undefined) {
      return { kind: 'accepted', channel: fromRow(rows[0]) };
    }
    return (await this.get(channelId)) === undefined ? { kind: 'unknown' } : { kind: 'replay' };
  }

  /** Records that Google said the calendar changed, on its sync state row (created if needed). */
  async markPushed(tenantId: string, calendarId: string, at: number): Promise<void> {
    await this.#pool.query(
      `INSERT INTO mirror_sync_state (calendar_id, tenant_id, pushed_at) VALUES ($1, $2, $3)
       ON CONFLICT (calendar_id) DO UPDATE SET pushed_at = EXCLUDED.pushed_at`,
      [calendarId, tenantId, new Date(at)],
    );
  }

  async delete(channelId: string): Promise<boolean> {
    const { rowCount } = await this.#pool.query('DELETE FROM mirror_channels WHERE channel_id = $1', [
      channelId,
    ]);
    return (rowCount ?? 0) > 0;
  }
}
