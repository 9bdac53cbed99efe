import { createHash } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import type { CalendarEvent, ListEventsQuery } from '@calgate/providers';
import type { CalendarHandle } from './access.ts';

/** Where one calendar's stream stands: the provider page being read and how much of it was used. */
interface StreamCursor {
  /** Provider page token of the current page (null for the first page). */
  t: string | null;
  /** Items of that page already returned. */
  i: number;
}

interface PageToken {
  v: 1;
  /** Fingerprint of the query the token belongs to. */
  q: string;
  /** Provider page size, kept so a page re-read has the same boundaries. */
  p: number;
  /** Per calendar id: its cursor, or 0 when that calendar is exhausted. */
  s: Record<string, StreamCursor | 0>;
}

export interface MergedEvent {
  calendarId: string;
  event: CalendarEvent;
}

export interface MergeResult {
  items: MergedEvent[];
  nextPageToken?: string;
  /**
   * When some calendars were read from the mirror: the oldest sync those pages reflect (RFC 3339).
   * Absent when every calendar answered from its own system.
   */
  syncedAt?: string;
  errors: { calendarId: string; error: CalgateError }[];
}

type Query = Omit<ListEventsQuery, 'maxResults' | 'pageToken'>;

/**
 * Upstream calls one tool call makes at once: at most this many per account (Google's quotas are
 * per user) and in all, so a key with many accounts fans out fully without flooding one of them.
 */
export const FAN_OUT_PER_ACCOUNT = 10;
export const FAN_OUT_TOTAL = 32;

/** A counting semaphore. */
class Slots {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  async take(): Promise<void> {
    if (this.#free > 0) {
      this.#free -= 1;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  give(): void {
    const next = this.#waiting.shift();
    if (next === undefined) {
      this.#free += 1;
    } else {
      next();
    }
  }
}

/** Runs `task` over `items` with at most `perGroup` in flight per group and `total` overall. */
export async function forEachLimited<T>(
  items: readonly T[],
  groupOf: (item: T) => string,
  limits: { perGroup: number; total: number },
  task: (item: T) => Promise<void>,
): Promise<void> {
  const total = new Slots(limits.total);
  const groups = new Map<string, Slots>();
  await Promise.all(
    items.map(async (item) => {
      const key = groupOf(item);
      let group = groups.get(key);
      if (group === undefined) {
        group = new Slots(limits.perGroup);
        groups.set(key, group);
      }
      await group.take();
      await total.take();
      try {
        await task(item);
      } finally {
        total.give();
        group.give();
      }
    }),
  );
}

function sortKey(event: CalendarEvent, orderBy: Query['orderBy']): number {
  if (orderBy === 'updated') {
    return Date.parse(event.updated ?? '') || 0;
  }
  const start = event.start.dateTime ?? (event.start.date ? `${event.start.date}T00:00:00Z` : '');
  return Date.parse(start) || 0;
}

function fingerprint(calendarIds: readonly string[], query: Query): string {
  const basis = JSON.stringify([
    [...calendarIds].sort(),
    query.timeMin ?? null,
    query.timeMax ?? null,
    query.query ?? null,
    query.singleEvents,
    query.orderBy ?? null,
    query.showDeleted ?? false,
  ]);
  return createHash('sha256').update(basis).digest('base64url').slice(0, 16);
}

function decodeToken(raw: string, expected: string): PageToken {
  let token: PageToken;
  try {
    token = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as PageToken;
  } catch {
    throw new CalgateError(
      'invalid_argument',
      'pageToken is not a token Calgate issued; omit it to start over.',
    );
  }
  if (token?.v !== 1 || typeof token.s !== 'object' || token.s === null || typeof token.p !== 'number') {
    throw new CalgateError(
      'invalid_argument',
      'pageToken is not a token Calgate issued; omit it to start over.',
    );
  }
  if (token.q !== expected) {
    throw new CalgateError(
      'invalid_argument',
      'pageToken belongs to a different query: repeat the same calendarId, timeMin, timeMax, query, singleEvents and orderBy, or omit pageToken.',
    );
  }
  return token;
}

/** One calendar's events, read page by page only as far as the merge needs. */
class Stream {
  readonly handle: CalendarHandle;
  #pageToken: string | null;
  /** The oldest sync among this calendar's pages read from a mirror. */
  syncedAt: string | undefined;
  #items: CalendarEvent[] = [];
  #index: number;
  #next: string | undefined;
  /** The page's completeBefore: the stream may wait there before reading its next page. */
  #bound: number | undefined;
  #loaded = false;
  #key = 0;
  #keyIndex = -1;
  #keyItems: CalendarEvent[] | undefined;

  constructor(handle: CalendarHandle, cursor: StreamCursor) {
    this.handle = handle;
    this.#pageToken = cursor.t;
    this.#index = cursor.i;
  }

  /**
   * Ensures the head item is loaded, reading pages as needed; false when the calendar has nothing
   * more. With `lazy`, a used-up page that says how far it is complete (completeBefore) ends the
   * reading instead: the stream then waits at that bound (see headKey) until the merge reaches it.
   */
  async fill(query: Query, pageSize: number, signal: AbortSignal, lazy: boolean): Promise<boolean> {
    while (!this.#loaded || this.#index >= this.#items.length) {
      if (this.#loaded) {
        if (this.#next === undefined) {
          return false;
        }
        if (lazy && this.#bound !== undefined) {
          return true;
        }
        this.#pageToken = this.#next;
        this.#index = 0;
      }
      const page = await this.handle.provider.listEvents(
        this.handle.ref,
        {
          ...query,
          maxResults: pageSize,
          ...(this.#pageToken === null ? {} : { pageToken: this.#pageToken }),
          // Reading ahead lazily, a page complete only part of the way is enough; when the merge
          // needs this calendar's next events now, the page must have them.
          elastic: lazy,
        },
        signal,
      );
      this.#items = page.items;
      this.#next = page.nextPageToken;
      this.#bound = page.completeBefore;
      this.#loaded = true;
      if (page.syncedAt !== undefined && (this.syncedAt === undefined || page.syncedAt < this.syncedAt)) {
        this.syncedAt = page.syncedAt;
      }
    }
    return true;
  }

  head(): CalendarEvent | undefined {
    return this.#items[this.#index];
  }

  /** The head's sort key, computed once per item; while waiting at a bound, the bound. */
  headKey(orderBy: Query['orderBy']): number {
    if (this.#index >= this.#items.length) {
      return this.#bound ?? Number.NEGATIVE_INFINITY;
    }
    if (this.#keyIndex !== this.#index || this.#keyItems !== this.#items) {
      this.#key = sortKey(this.#items[this.#index] as CalendarEvent, orderBy);
      this.#keyIndex = this.#index;
      this.#keyItems = this.#items;
    }
    return this.#key;
  }

  advance(): void {
    this.#index += 1;
  }

  cursor(): StreamCursor | 0 {
    if (this.#index >= this.#items.length && this.#next === undefined) {
      return 0;
    }
    if (this.#index >= this.#items.length) {
      return { t: this.#next ?? null, i: 0 };
    }
    const at =
      this.#index === 0
        ? undefined
        : this.handle.provider.pageTokenAt?.(this.#pageToken ?? undefined, this.#index);
    return at === undefined ? { t: this.#pageToken, i: this.#index } : { t: at, i: 0 };
  }
}

/** The stream whose head comes first (ties by calendar id). With one calendar left, the merge skips this. */
function earliest(live: ReadonlySet<Stream>, orderBy: Query['orderBy']): Stream {
  let best: Stream | undefined;
  let bestKey = 0;
  for (const stream of live) {
    const key = stream.headKey(orderBy);
    if (
      best === undefined ||
      key < bestKey ||
      (key === bestKey && stream.handle.calendar.id < best.handle.calendar.id)
    ) {
      best = stream;
      bestKey = key;
    }
  }
  return best as Stream;
}

/**
 * A k-way merge of several calendars' event streams by start time (or update time), reading each
 * upstream lazily page by page, so `maxResults` holds across calendars and a page token resumes
 * exactly after the last event returned.
 */
export async function mergeEvents(
  handles: readonly CalendarHandle[],
  query: Query,
  maxResults: number,
  pageToken: string | undefined,
  signal: AbortSignal,
): Promise<MergeResult> {
  const q = fingerprint(
    handles.map((handle) => handle.calendar.id),
    query,
  );
  const token = pageToken === undefined ? undefined : decodeToken(pageToken, q);
  const pageSize = token?.p ?? Math.min(2500, Math.max(maxResults, 1));
  const errors: MergeResult['errors'] = [];
  const streams: Stream[] = [];
  for (const handle of handles) {
    const cursor = token === undefined ? { t: null, i: 0 } : token.s[handle.calendar.id];
    if (cursor === undefined || cursor === 0) {
      continue;
    }
    if (typeof cursor.i !== 'number' || (cursor.t !== null && typeof cursor.t !== 'string')) {
      throw new CalgateError(
        'invalid_argument',
        'pageToken is not a token Calgate issued; omit it to start over.',
      );
    }
    streams.push(new Stream(handle, cursor));
  }

  const live = new Set<Stream>();
  const fill = async (stream: Stream, lazy = true) => {
    try {
      if (await stream.fill(query, pageSize, signal, lazy)) {
        live.add(stream);
      } else {
        live.delete(stream);
      }
    } catch (error) {
      live.delete(stream);
      if (handles.length === 1 || !(error instanceof CalgateError)) {
        throw error;
      }
      errors.push({ calendarId: stream.handle.calendar.id, error });
    }
  };
  await forEachLimited(
    streams,
    // Google's quotas are per account; calendars read from Postgres only count towards the total.
    (stream) =>
      stream.handle.provider.readsLocally ? stream.handle.calendar.id : stream.handle.calendar.connectionId,
    { perGroup: FAN_OUT_PER_ACCOUNT, total: FAN_OUT_TOTAL },
    fill,
  );

  const items: MergedEvent[] = [];
  while (items.length < maxResults && live.size > 0) {
    const chosen = live.size === 1 ? (live.values().next().value as Stream) : earliest(live, query.orderBy);
    const head = chosen.head();
    if (head === undefined) {
      // Waiting at its bound, and nothing else comes earlier: its next page is needed now.
      await fill(chosen, false);
      continue;
    }
    items.push({ calendarId: chosen.handle.calendar.id, event: head });
    chosen.advance();
    // A full answer needs no look past it: the cursor names the next page without reading it.
    if (chosen.head() === undefined && items.length < maxResults) {
      await fill(chosen);
    }
  }

  const failed = new Set(errors.map((entry) => entry.calendarId));
  const states: Record<string, StreamCursor | 0> = {};
  let more = false;
  for (const stream of streams) {
    const state = failed.has(stream.handle.calendar.id) ? 0 : stream.cursor();
    states[stream.handle.calendar.id] = state;
    more ||= state !== 0;
  }
  const result: MergeResult = { items, errors };
  for (const stream of streams) {
    if (
      stream.syncedAt !== undefined &&
      (result.syncedAt === undefined || stream.syncedAt < result.syncedAt)
    ) {
      result.syncedAt = stream.syncedAt;
    }
  }
  if (more) {
    const next: PageToken = { v: 1, q, p: pageSize, s: states };
    result.nextPageToken = Buffer.from(JSON.stringify(next)).toString('base64url');
  }
  return result;
}
