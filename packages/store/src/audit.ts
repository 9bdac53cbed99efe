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
}

/** Where tool calls are recorded. Never receives arguments, event bodies or secrets. */
export interface AuditLog {
  record(entry: AuditRecord): void;
  /** Writes everything recorded so far. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface BufferedAuditLogOptions {
  /** Flush at the latest this long after the first buffered entry. */
  flushIntervalMs?: number;
  /** Flush as soon as this many entries wait. */
  maxBatch?: number;
  onError?: (error: unknown, dropped: number) => void;
}

/**
 * Buffers entries and writes them in multi-row inserts, so the audit trail costs the hot path
 * nothing but an array push. `close()` drains the buffer before shutdown.
 */
export class PostgresAuditLog implements AuditLog {
  readonly #db: Database;
  readonly #interval: number;
  readonly #maxBatch: number;
  readonly #onError: (error: unknown, dropped: number) => void;
  #buffer: AuditRecord[] = [];
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> = Promise.resolve();

  constructor(db: Database, options: BufferedAuditLogOptions = {}) {
    this.#db = db;
    this.#interval = options.flushIntervalMs ?? 250;
    this.#maxBatch = options.maxBatch ?? 500;
    this.#onError = options.onError ?? (() => {});
  }

  record(entry: AuditRecord): void {
    this.#buffer.push(entry);
    if (this.#buffer.length >= this.#maxBatch) {
      void this.flush();
    } else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => void this.flush(), this.#interval);
      this.#timer.unref();
    }
  }

  flush(): Promise<void> {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    const batch = this.#buffer;
    this.#buffer = [];
    const previous = this.#inFlight;
    this.#inFlight = previous.then(() => (batch.length > 0 ? this.#write(batch) : undefined));
    return this.#inFlight;
  }

  async close(): Promise<void> {
    await this.flush();
  }

  // One INSERT … SELECT FROM unnest(…) per batch: a round trip and no per-row planning.
  async #write(batch: AuditRecord[]): Promise<void> {
    try {
      await this.#db.pool.query(
        `INSERT INTO audit_log (tenant_id, key_id, request_id, tool, calendar_ids, outcome, error_code, latency_ms, created_at)
         SELECT t, k, r, tool, ARRAY(SELECT json_array_elements_text(c::json)), o::"AuditOutcome", e, l, a
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::timestamptz[])
           AS x(t, k, r, tool, c, o, e, l, a)`,
        [
          batch.map((entry) => entry.tenantId),
          batch.map((entry) => entry.keyId),
          batch.map((entry) => entry.requestId),
          batch.map((entry) => entry.tool),
          batch.map((entry) => JSON.stringify(entry.calendarIds)),
          batch.map((entry) => entry.outcome),
          batch.map((entry) => entry.errorCode),
          batch.map((entry) => entry.latencyMs),
          batch.map((entry) => entry.at),
        ],
      );
    } catch (error) {
      this.#onError(error, batch.length);
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
