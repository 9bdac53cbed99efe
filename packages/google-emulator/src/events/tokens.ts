/**
 * Page tokens and sync tokens. Both are opaque to clients; inside they carry what a keyset page
 * or an incremental sync needs. Sync tokens are bound to a calendar and to the emulator's epoch,
 * and expire when the admin API raises the calendar's sync floor (→ 410 fullSyncRequired).
 */
import { createHash } from 'node:crypto';
import { apiErrors } from '../errors.ts';
import type { CalendarRecord } from '../state.ts';

export type SortKey = (number | string)[];

export interface PageCursor {
  /** The sort key of the last row already returned. */
  after: SortKey;
  /** The calendar's change sequence when the first page was read: the eventual sync point. */
  snapshot: number;
  /** A hash of the query, so a token cannot be replayed against a different query. */
  query: string;
}

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function decode(token: string): unknown {
  try {
    return JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
}

export function queryFingerprint(
  query: URLSearchParams,
  ignore: string[] = ['pageToken', 'maxResults'],
): string {
  const entries = [...query.entries()]
    .filter(([k]) => !ignore.includes(k))
    .sort(([a], [b]) => a.localeCompare(b));
  return createHash('sha256').update(JSON.stringify(entries)).digest('base64url').slice(0, 16);
}

export function encodePageToken(cursor: PageCursor): string {
  return `EjA${encode([cursor.after, cursor.snapshot, cursor.query])}`;
}

export function decodePageToken(token: string, fingerprint: string): PageCursor {
  const value = token.startsWith('EjA') ? decode(token.slice(3)) : null;
  if (!Array.isArray(value) || value.length !== 3 || !Array.isArray(value[0]) || value[2] !== fingerprint) {
    throw apiErrors.invalid('Invalid page token value.', 'pageToken');
  }
  return { after: value[0] as SortKey, snapshot: Number(value[1]), query: String(value[2]) };
}

/** What a sync token is bound to: a calendar's events, or a principal's calendar list. */
export type SyncSubject = Pick<CalendarRecord, 'id' | 'seq' | 'syncFloor'>;

export function encodeSyncToken(calendar: SyncSubject, seq: number, epoch: string, scope = 'events'): string {
  return `CP${encode([scope, calendar.id, seq, epoch])}`;
}

/** The change sequence a sync token stands for; 410 fullSyncRequired if it is unknown or expired. */
export function decodeSyncToken(
  token: string,
  calendar: SyncSubject,
  epoch: string,
  scope = 'events',
): number {
  const value = token.startsWith('CP') ? decode(token.slice(2)) : null;
  if (
    !Array.isArray(value) ||
    value[0] !== scope ||
    value[1] !== calendar.id ||
    value[3] !== epoch ||
    typeof value[2] !== 'number' ||
    value[2] < calendar.syncFloor ||
    value[2] > calendar.seq
  ) {
    throw apiErrors.fullSyncRequired();
  }
  return value[2];
}

export function compareKeys(a: SortKey, b: SortKey): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) {
      continue;
    }
    if (x === undefined) {
      return -1;
    }
    if (y === undefined) {
      return 1;
    }
    if (typeof x === 'number' && typeof y === 'number') {
      return x - y;
    }
    return String(x) < String(y) ? -1 : 1;
  }
  return 0;
}

/** maxResults as Google reads it: default `fallback`, clamped to `max`, at least 1. */
export function pageSize(value: string | null, fallback: number, max: number): number {
  if (value === null || value === '') {
    return fallback;
  }
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw apiErrors.invalid(
      `Invalid value '${value}'. Values must be within the range: [1, ${max}]`,
      'maxResults',
    );
  }
  return Math.min(n, max);
}
