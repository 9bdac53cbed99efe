import { randomUUID } from 'node:crypto';
import { AuditSpool, type PendingAuditRecord } from './audit-spool.ts';
import type { Database, Prisma } from './db.ts';

export interface AuditRecord {
  tenantId: string;
  keyId: string | null;
  requestId: string | null;
  tool: string;
  calendarIds: string[];
  outcome: 'ok' | 'error' | 'denied';
  errorCode: string | null;
  latencyMs: number;
  at: Date;
  /** 'tool' (the default) for MCP calls; 'dashboard' for a person's action, `tool` naming it. */
  kind?: AuditKind;
  /** The signed-in person behind a dashboard action. */
  actorUserId?: string | null;
  /** Ids a dashboard action acted on; never secrets. */
  target?: string[];
  /** The MCP client's product token (from its User-Agent). */
  clientName?: string | null;
  /** What a failed dashboard action answered, shortened. */
  errorMessage?: string | null;
  /** The request's address (see clientAddressOf): the client behind a trusted proxy, else the peer. */
  clientAddress?: string | null;
}

export type AuditKind = 'tool' | 'dashboard';

/** Where tool calls and dashboard actions are recorded. Never receives arguments, event bodies or secrets. */
export interface AuditLog {
  record(entry: AuditRecord): void;
  /**
   * Writes everything recorded so far. Resolves once those rows are in Postgres, or, when
   * Postgres does not answer, once they are in the spool to be replayed later.
   */
  flush(): Promise<void>;
  /** Flushes, spooling what Postgres does not take, and stops. */
  close(): Promise<void>;
}

/** What the writer reports besides failures: the spool starting to fill, and being replayed. */
export type AuditSpoolEvent =
  | { kind: 'spilling'; rows: number; dir: string }
  | { kind: 'replayed'; rows: number; segments: number; unreadable: number; dir: string };

export interface BufferedAuditLogOptions {
  /** Flush at the latest this long after the first buffered entry. */
  flushIntervalMs?: number;
  /** Flush as soon as this many entries wait; also the size of one insert. */
  maxBatch?: number;
  /** Rows held in memory while Postgres does not answer; further rows go to the spool. */
  bufferRows?: number;
  /**
   * Directory for rows beyond the buffer, and for rows still unwritten at shutdown, replayed into
   * Postgres when it answers again (also at the next start). Without it such rows are dropped.
   */
  spoolDir?: string;
  /** Backoff between attempts: doubles from `retryBaseMs` up to `retryMaxMs`, with jitter. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** How long close() keeps trying Postgres before it spools what is left. */
  closeTimeoutMs?: number;
  /** Rows that could be kept nowhere (Postgres rejected them, or the spool failed). */
  onError?: (error: unknown, dropped: number) => void;
  /** Told about every failed and every successful write (and when it began), e.g. to log an outage once. */
  health?: WriteHealth;
  onSpool?: (event: AuditSpoolEvent) => void;
  random?: () => number;
}

export interface WriteHealth {
  failed(error: unknown, startedAt?: number): void;
  succeeded(startedAt?: number): void;
}

interface Waiter {
  upTo: number;
  resolve: () => void;
}

/** Postgres refused the rows themselves (data exception, integrity violation): retrying cannot help. */
function isRejection(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
}

function pause(ms: number): { done: Promise<void>; wake: () => void } {
  let wake = () => {};
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  return { done, wake };
}

type Sequenced = PendingAuditRecord & { seq: number };

/**
 * Buffers entries and writes them in multi-row inserts, so the audit trail costs the hot path
 * nothing but an array push. A failed insert is retried with jittered exponential backoff while
 * rows wait in memory (up to `bufferRows`); beyond that, and at shutdown, rows go to an
 * append-once spool on disk that is replayed when Postgres answers. Every row carries an id, and
 * the insert skips ids already stored, so retries and replays never write a row twice.
 */
export class PostgresAuditLog implements AuditLog {
  readonly #db: Database;
  readonly #interval: number;
  readonly #maxBatch: number;
  readonly #bufferRows: number;
  readonly #retryBase: number;
  readonly #retryMax: number;
  readonly #closeTimeout: number;
  readonly #spool: AuditSpool | undefined;
  readonly #onError: (error: unknown, dropped: number) => void;
  readonly #health: WriteHealth | undefined;
  readonly #onSpool: (event: AuditSpoolEvent) => void;
  readonly #random: () => number;
  /** In memory, oldest first; the head batch stays here until Postgres has it. */
  #pending: Sequenced[] = [];
  /** Beyond the buffer, waiting to be spooled; `#spilling` is being written right now. */
  #overflow: Sequenced[] = [];
  #spilling: Sequenced[] = [];
  #spillChain: Promise<void> = Promise.resolve();
  #spillTimer: NodeJS.Timeout | undefined;
  /** Rows spooled since the spool was last found empty; the first spill is reported. */
  #spooled = 0;
  /** Bumped by every spill, so a replay knows whether new segments appeared meanwhile. */
  #spills = 0;
  #spoolDirty: boolean;
  /** Replayed since the spool was last found empty, reported when it is again. */
  #replayed = { rows: 0, segments: 0, unreadable: 0 };
  #seq = 0;
  #waiters: Waiter[] = [];
  #timer: NodeJS.Timeout | undefined;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #failures = 0;
  #spillOnFailure = false;
  #closing = false;

  constructor(db: Database, options: BufferedAuditLogOptions = {}) {
    this.#db = db;
    this.#interval = options.flushIntervalMs ?? 250;
    this.#maxBatch = options.maxBatch ?? 500;
    this.#bufferRows = Math.max(options.bufferRows ?? 50_000, this.#maxBatch);
    this.#retryBase = options.retryBaseMs ?? 100;
    this.#retryMax = options.retryMaxMs ?? 5_000;
    this.#closeTimeout = options.closeTimeoutMs ?? 5_000;
    this.#spool = options.spoolDir === undefined ? undefined : new AuditSpool(options.spoolDir);
    this.#onError = options.onError ?? (() => {});
    this.#health = options.health;
    this.#onSpool = options.onSpool ?? (() => {});
    this.#random = options.random ?? Math.random;
    // Segments left by an earlier run (or another process) are replayed as soon as Postgres answers.
    this.#spoolDirty = this.#spool !== undefined;
    if (this.#spoolDirty) {
      this.#run();
    }
  }

  record(entry: AuditRecord): void {
    this.#seq += 1;
    const row: Sequenced = { ...entry, entryId: randomUUID(), seq: this.#seq };
    if (this.#closing) {
      this.#overflow.push(row);
      this.#spillSoon(0);
      return;
    }
    if (this.#pending.length >= this.#bufferRows) {
      this.#overflow.push(row);
      this.#spillSoon(this.#overflow.length >= this.#maxBatch * 10 ? 0 : 1_000);
      return;
    }
    this.#pending.push(row);
    if (this.#loop === undefined) {
      this.#soon();
    }
  }

  /** Writes a full batch now; fewer rows wait up to the flush interval for company. */
  #soon(): void {
    if (this.#pending.length >= this.#maxBatch) {
      this.#run();
    } else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.#run(), this.#interval);
      this.#timer.unref();
    }
  }

  flush(): Promise<void> {
    const upTo = this.#seq;
    const waiting = new Promise<void>((resolve) => this.#waiters.push({ upTo, resolve }));
    this.#spillOnFailure = true;
    this.#wake?.();
    this.#run();
    this.#settle(false);
    return waiting;
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#spillOnFailure = true;
    this.#wake?.();
    this.#run();
    const loop = this.#loop ?? Promise.resolve();
    let expired = false;
    const deadline = pause(this.#closeTimeout);
    await Promise.race([loop, deadline.done.then(() => (expired = true))]);
    deadline.wake();
    if (expired) {
      // Postgres hangs rather than refuses: keep what is left on disk. A write still in flight
      // that lands after all is harmless, as the replay skips rows already stored.
      await this.#spillAll();
    }
    clearTimeout(this.#spillTimer);
    await this.#spillOverflow();
    if (this.#pending.length > 0) {
      this.#onError(new Error('audit log closed before Postgres took these rows'), this.#pending.length);
      this.#pending = [];
    }
    this.#settle(true);
  }

  #run(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    this.#loop ??= this.#work().finally(() => {
      this.#loop = undefined;
      this.#settle(false);
      if (!this.#closing && this.#pending.length > 0) {
        if (this.#waiters.length > 0) {
          this.#run();
        } else {
          this.#soon();
        }
      }
    });
  }

  async #work(): Promise<void> {
    while (this.#pending.length > 0 || (this.#spoolDirty && !this.#closing)) {
      const startedAt = Date.now();
      let gather = false;
      try {
        let wrote = true;
        if (this.#pending.length > 0) {
          const batch = this.#pending.slice(0, this.#maxBatch);
          await this.#insertKeeping(batch);
          this.#pending.splice(0, batch.length);
          // Under steady traffic, rows that came in meanwhile gather for the interval too: a few
          // large inserts a second rather than one small one per round trip (a flush or close
          // that waits goes on at once).
          gather =
            this.#pending.length > 0 &&
            this.#pending.length < this.#maxBatch &&
            this.#waiters.length === 0 &&
            !this.#closing;
        } else {
          wrote = await this.#replay();
        }
        this.#failures = 0;
        if (wrote) {
          this.#health?.succeeded(startedAt);
        }
        this.#settle(false);
        if (gather) {
          return;
        }
      } catch (error) {
        this.#failures += 1;
        this.#health?.failed(error, startedAt);
        if (this.#spillOnFailure && this.#spool !== undefined) {
          // Someone waits (flush, close): what Postgres does not take now goes to disk.
          this.#spillOnFailure = false;
          await this.#spillAll();
          this.#settle(true);
        }
        if (this.#closing) {
          return;
        }
        const delay = Math.min(this.#retryMax, this.#retryBase * 2 ** Math.min(this.#failures - 1, 30));
        const sleep = pause(delay / 2 + (this.#random() * delay) / 2);
        this.#wake = sleep.wake;
        await sleep.done;
        this.#wake = undefined;
      }
    }
  }

  /**
   * Replays the oldest spooled segment (one per turn, so rows recorded meanwhile are not held up
   * behind a long spool); whether there was one, and so Postgres was written to.
   */
  async #replay(): Promise<boolean> {
    const spool = this.#spool;
    if (spool === undefined) {
      this.#spoolDirty = false;
      return false;
    }
    await this.#spillChain;
    const spills = this.#spills;
    const segment = await spool.replayOldest((rows) => this.#insertKeeping(rows), this.#maxBatch);
    if (segment !== undefined) {
      this.#replayed.rows += segment.rows;
      this.#replayed.segments += 1;
      this.#replayed.unreadable += segment.unreadable;
      if (segment.unreadable > 0) {
        this.#onError(new Error('unreadable lines in the audit spool'), segment.unreadable);
      }
      return true;
    }
    if (this.#spills === spills) {
      this.#spoolDirty = false;
      this.#spooled = 0;
      if (this.#replayed.segments > 0) {
        this.#onSpool({ kind: 'replayed', ...this.#replayed, dir: spool.dir });
        this.#replayed = { rows: 0, segments: 0, unreadable: 0 };
      }
    }
    return false;
  }

  /** Inserts the rows; rows Postgres rejects as such are dropped and reported, one by one. */
  async #insertKeeping(rows: PendingAuditRecord[]): Promise<void> {
    try {
      await this.#insert(rows);
    } catch (error) {
      if (!isRejection(error)) {
        throw error;
      }
      for (const row of rows) {
        try {
          await this.#insert([row]);
        } catch (rowError) {
          if (!isRejection(rowError)) {
            throw rowError;
          }
          this.#onError(rowError, 1);
        }
      }
    }
  }

  // One INSERT … SELECT FROM unnest(…) per batch: a round trip and no per-row planning. Rows keep
  // their order (ids follow the calls); rows of a tenant deleted meanwhile are skipped, as its
  // audit rows were deleted with it.
  async #insert(rows: PendingAuditRecord[]): Promise<void> {
    await this.#db.pool.query(
      `INSERT INTO audit_log (entry_id, tenant_id, key_id, request_id, tool, calendar_ids, outcome, error_code, latency_ms, created_at,
                              kind, actor_user_id, target, client_name, error_message, client_address)
       SELECT id, t, k, r, tool, ARRAY(SELECT json_array_elements_text(c::json)), o::"AuditOutcome", e, l, a,
              kind, u, ARRAY(SELECT json_array_elements_text(g::json)), cn, em, ca
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::timestamptz[],
                   $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[])
         WITH ORDINALITY AS x(id, t, k, r, tool, c, o, e, l, a, kind, u, g, cn, em, ca, n)
       WHERE EXISTS (SELECT 1 FROM tenants WHERE tenants.id = x.t)
       ORDER BY n
       ON CONFLICT (entry_id) DO NOTHING`,
      [
        rows.map((row) => row.entryId),
        rows.map((row) => row.tenantId),
        rows.map((row) => row.keyId),
        rows.map((row) => row.requestId),
        rows.map((row) => row.tool),
        rows.map((row) => JSON.stringify(row.calendarIds)),
        rows.map((row) => row.outcome),
        rows.map((row) => row.errorCode),
        rows.map((row) => row.latencyMs),
        rows.map((row) => row.at),
        rows.map((row) => row.kind ?? 'tool'),
        rows.map((row) => row.actorUserId ?? null),
        rows.map((row) => JSON.stringify(row.target ?? [])),
        rows.map((row) => row.clientName ?? null),
        rows.map((row) => row.errorMessage ?? null),
        rows.map((row) => row.clientAddress ?? null),
      ],
    );
  }

  #spillSoon(delayMs: number): void {
    if (delayMs > 0 && this.#spillTimer !== undefined) {
      return;
    }
    clearTimeout(this.#spillTimer);
    this.#spillTimer = setTimeout(() => {
      this.#spillTimer = undefined;
      void this.#spillOverflow();
    }, delayMs);
    this.#spillTimer.unref();
  }

  /** Moves everything in memory to the spool (flush or close while Postgres does not answer). */
  async #spillAll(): Promise<void> {
    if (this.#spool === undefined) {
      return;
    }
    this.#overflow = [...this.#pending, ...this.#overflow];
    this.#pending = [];
    await this.#spillOverflow();
  }

  #spillOverflow(): Promise<void> {
    this.#spillChain = this.#spillChain.then(async () => {
      if (this.#overflow.length === 0) {
        return;
      }
      const rows = this.#overflow;
      this.#overflow = [];
      const spool = this.#spool;
      if (spool === undefined) {
        this.#onError(new Error('audit buffer full and no spool directory'), rows.length);
        this.#settle(false);
        return;
      }
      this.#spilling = rows;
      try {
        await spool.append(rows.map(({ seq: _seq, ...row }) => row));
        if (this.#spooled === 0) {
          this.#onSpool({ kind: 'spilling', rows: rows.length, dir: spool.dir });
        }
        this.#spooled += rows.length;
        this.#spills += 1;
        this.#spoolDirty = true;
      } catch (error) {
        this.#onError(error, rows.length);
      } finally {
        this.#spilling = [];
      }
      this.#settle(false);
      if (!this.#closing) {
        this.#run();
      }
    });
    return this.#spillChain;
  }

  /** Resolves flushes whose rows are all written (or, with `spooled`, at least on disk). */
  #settle(spooled: boolean): void {
    if (this.#waiters.length === 0) {
      return;
    }
    if (!spooled && this.#spoolDirty && !this.#closing) {
      return;
    }
    const oldest = Math.min(
      this.#pending[0]?.seq ?? Number.POSITIVE_INFINITY,
      this.#overflow[0]?.seq ?? Number.POSITIVE_INFINITY,
      this.#spilling[0]?.seq ?? Number.POSITIVE_INFINITY,
    );
    const still: Waiter[] = [];
    for (const waiter of this.#waiters) {
      if (waiter.upTo < oldest) {
        waiter.resolve();
      } else {
        still.push(waiter);
      }
    }
    this.#waiters = still;
    if (this.#waiters.length === 0 && !this.#closing) {
      this.#spillOnFailure = false;
    }
  }
}

/** Keeps entries in memory: for tests of callers, below the seam that PostgresAuditLog covers. */
export class MemoryAuditLog implements AuditLog {
  readonly entries: AuditRecord[] = [];
  record(entry: AuditRecord): void {
    this.entries.push(entry);
  }
  async flush(): Promise<void> {}
  async close(): Promise<void> {}
}

export function listAudit(prisma: Prisma, tenantId: string, limit = 100) {
  return prisma.auditEntry.findMany({ where: { tenantId }, orderBy: { id: 'desc' }, take: limit });
}
