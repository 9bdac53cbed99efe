/**
 * Mirror lookups made in the same turn of the event loop, coalesced into one query: a listing
 * over 30 calendars asks Postgres twice (freshness of all, rows of all) instead of 60 times.
 * Calls are grouped by what must be equal to share a query (the window and text of a read).
 * A calendar's rows read alone at a known version are kept for that version (see VersionCache):
 * the same read at the same version is answered without Postgres.
 */
import type { MirrorFreshness, MirrorRangeQuery, MirrorRepository, MirrorResourceRow } from '@calgate/store';
import { VersionCache } from './version-cache.ts';

interface Waiting<R> {
  key: string;
  resolve(value: R | undefined): void;
  reject(error: unknown): void;
}

/** Collects keys per group until the next turn, then loads each group once. */
class Coalescer<A, R> {
  readonly #load: (keys: string[], arg: A) => Promise<Map<string, R>>;
  #groups = new Map<string, { arg: A; waiting: Waiting<R>[] }>();
  #scheduled = false;

  constructor(load: (keys: string[], arg: A) => Promise<Map<string, R>>) {
    this.#load = load;
  }

  get(group: string, key: string, arg: A): Promise<R | undefined> {
    return new Promise((resolve, reject) => {
      let entry = this.#groups.get(group);
      if (entry === undefined) {
        entry = { arg, waiting: [] };
        this.#groups.set(group, entry);
      }
      entry.waiting.push({ key, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    const groups = this.#groups;
    this.#groups = new Map();
    this.#scheduled = false;
    for (const { arg, waiting } of groups.values()) {
      const keys = [...new Set(waiting.map((w) => w.key))];
      this.#load(keys, arg).then(
        (found) => {
          for (const w of waiting) {
            w.resolve(found.get(w.key));
          }
        },
        (error: unknown) => {
          for (const w of waiting) {
            w.reject(error);
          }
        },
      );
    }
  }
}

export type MirrorReads = Pick<MirrorRepository, 'freshness' | 'readResources' | 'readFirst'>;
/**
 * A calendar's first rows (see MirrorRepository.readFirst). `shared`: read together with other
 * calendars' in one merged read, so `throughMs` is where all of them together are complete.
 */
export type FirstRows = { rows: readonly MirrorResourceRow[]; throughMs: number | null; shared: boolean };

export class MirrorBatches {
  readonly #freshness: Coalescer<null, MirrorFreshness>;
  readonly #rows: Coalescer<MirrorRangeQuery, MirrorResourceRow[]>;
  readonly #first: Coalescer<MirrorRangeQuery & { first: number }, FirstRows>;

  constructor(mirror: MirrorReads) {
    this.#freshness = new Coalescer((ids) => mirror.freshness(ids));
    this.#rows = new Coalescer((ids, query) => mirror.readResources(ids, query));
    this.#first = new Coalescer((ids, query) =>
      inParallel(ids, MERGED_CHUNK, async (chunk) => {
        const found = await mirror.readFirst(chunk, query);
        return new Map([...found].map(([id, first]) => [id, { ...first, shared: chunk.length > 1 }]));
      }),
    );
  }

  /**
   * Rows read at a version: kept frozen, so that no reader can change what the next one gets.
   * Only a calendar's own read is kept: a merged read's `throughMs` depends on the calendars read
   * with it.
   */
  readonly #kept = new VersionCache<FirstRows>({
    weight: (read) => read.rows.length + 1,
    maxEntries: KEPT_READS,
    maxTotal: KEPT_ROWS,
    maxEach: KEPT_ROWS / 10,
  });

  /** The calendar's sync state as reads need it; undefined when it was never synced. */
  freshness(calendarId: string): Promise<MirrorFreshness | undefined> {
    return this.#freshness.get('', calendarId, null);
  }

  /** The calendar's rows of a window; `version`: the calendar's mirror version, when known. */
  async rows(
    calendarId: string,
    query: MirrorRangeQuery,
    version?: string,
  ): Promise<readonly MirrorResourceRow[]> {
    const group = groupOf(query);
    const key = version === undefined ? undefined : VersionCache.key(calendarId, version, 'rows', group);
    const kept = key === undefined ? undefined : this.#kept.get(key);
    if (kept !== undefined) {
      return kept.rows;
    }
    const rows = (await this.#rows.get(group, calendarId, query)) ?? [];
    if (key !== undefined) {
      // Rows read after the version was: at least as new as it (a later version misses the key).
      this.#kept.set(key, { rows: frozen(rows), throughMs: null, shared: false });
    }
    return rows;
  }

  /** The calendar's first rows of a window; `version` as for rows(). */
  async firstRows(
    calendarId: string,
    query: MirrorRangeQuery & { first: number },
    version?: string,
  ): Promise<FirstRows> {
    const group = groupOf(query);
    const key = version === undefined ? undefined : VersionCache.key(calendarId, version, 'first', group);
    const kept = key === undefined ? undefined : this.#kept.get(key);
    if (kept !== undefined) {
      return kept;
    }
    const read = (await this.#first.get(group, calendarId, query)) ?? {
      rows: [],
      throughMs: null,
      shared: false,
    };
    if (key !== undefined && !read.shared) {
      this.#kept.set(key, Object.freeze({ ...read, rows: frozen(read.rows) }));
    }
    return read;
  }
}

/** Reads kept at once, and rows in all (each some kB: tens of megabytes at most). */
const KEPT_READS = 2_000;
const KEPT_ROWS = 20_000;

/** Rows and what they hold made read-only (a reader that wrote to one would throw, not spoil it). */
function frozen(rows: readonly MirrorResourceRow[]): readonly MirrorResourceRow[] {
  for (const row of rows) {
    deepFreeze(row);
  }
  return Object.freeze(rows);
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value) || ArrayBuffer.isView(value)) {
    return;
  }
  Object.freeze(value);
  for (const inner of Object.values(value)) {
    deepFreeze(inner);
  }
}

/**
 * Calendars per merged first-rows read: one query merges their index scans, whose planning grows
 * with the number of calendars; more calendars are split into reads Postgres runs at once.
 */
const MERGED_CHUNK = 32;

/** Runs a read over chunks of the ids at once and joins the answers. */
async function inParallel<R>(
  ids: string[],
  size: number,
  read: (chunk: string[]) => Promise<Map<string, R>>,
): Promise<Map<string, R>> {
  if (ids.length <= size) {
    return read(ids);
  }
  const chunks: string[][] = [];
  for (let i = 0; i < ids.length; i += size) {
    chunks.push(ids.slice(i, i + size));
  }
  const answers = await Promise.all(chunks.map(read));
  return new Map(answers.flatMap((answer) => [...answer]));
}

function groupOf(query: MirrorRangeQuery & { first?: number }): string {
  return JSON.stringify([
    query.tenantId,
    query.timeMin?.getTime(),
    query.timeMax?.getTime(),
    query.query,
    query.withExceptions,
    query.limit,
    query.first,
  ]);
}
