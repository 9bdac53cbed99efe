import type { Prisma } from './db.ts';

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
  readonly #prisma: Prisma;
  readonly #interval: number;
  readonly #maxBatch: number;
  readonly #onError: (error: unknown, dropped: number) => void;
  #buffer: AuditRecord[] = [];
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> = Promise.resolve();

  constructor(prisma: Prisma, options: BufferedAuditLogOptions = {}) {
    this.#prisma = prisma;
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

  async #write(batch: AuditRecord[]): Promise<void> {
    try {
      await this.#prisma.auditEntry.createMany({
        data: batch.map((entry) => ({
          tenantId: entry.tenantId,
          keyId: entry.keyId,
          requestId: entry.requestId,
          tool: entry.tool,
          calendarIds: entry.calendarIds,
          outcome: entry.outcome,
          errorCode: entry.errorCode,
          latencyMs: entry.latencyMs,
          createdAt: entry.at,
        })),
      });
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
