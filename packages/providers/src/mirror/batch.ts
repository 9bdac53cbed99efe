/**
 * Mirror lookups made in the same turn of the event loop, coalesced into one query: a listing
 * over 30 calendars asks Postgres twice (freshness of all, rows of all) instead of 60 times.
 * Calls are grouped by what must be equal to share a query (the window and text of a read).
 */
import type { MirrorFreshness, MirrorRangeQuery, MirrorRepository, MirrorResourceRow } from '@calgate/store';

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
export type FirstRows = { rows: MirrorResourceRow[]; throughMs: number | null; shared: boolean };

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

  /** The calendar's sync state as reads need it; undefined when it was never synced. */
  freshness(calendarId: string): Promise<MirrorFreshness | undefined> {
    return this.#freshness.get('', calendarId, null);
  }

  async rows(calendarId: string, query: MirrorRangeQuery): Promise<MirrorResourceRow[]> {
    return (await this.#rows.get(groupOf(query), calendarId, query)) ?? [];
  }

  async firstRows(calendarId: string, query: MirrorRangeQuery & { first: number }): Promise<FirstRows> {
    return (
      (await this.#first.get(groupOf(query), calendarId, query)) ?? {
        rows: [],
        throughMs: null,
        shared: false,
      }
    );
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
