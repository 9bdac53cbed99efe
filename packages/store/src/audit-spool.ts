import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuditKind, AuditRecord } from './audit.ts';

/** A recorded call as it waits to be written: the record and the id that makes its insert idempotent. */
export interface PendingAuditRecord extends AuditRecord {
  /** A UUID chosen when the call was recorded; `audit_log.entry_id` is unique. */
  entryId: string;
}

export interface SegmentReplay {
  rows: number;
  /** Lines that were not a whole record (a write cut short by a crash). */
  unreadable: number;
}

const SEGMENT = '.jsonl';
const PARTIAL = '.jsonl.tmp';
const OUTCOMES: ReadonlySet<string> = new Set(['ok', 'error', 'denied']);

function parse(line: string): PendingAuditRecord | undefined {
  try {
    const row = JSON.parse(line) as Partial<Record<keyof PendingAuditRecord, unknown>>;
    const at = typeof row.at === 'string' ? new Date(row.at) : undefined;
    const textOrNull = (value: unknown) => typeof value === 'string' || value === null;
    // Segments written before dashboard actions (and client addresses) were recorded lack these fields.
    const optionalText = (value: unknown) => value === undefined || textOrNull(value);
    if (
      typeof row.entryId !== 'string' ||
      typeof row.tenantId !== 'string' ||
      typeof row.tool !== 'string' ||
      typeof row.outcome !== 'string' ||
      !OUTCOMES.has(row.outcome) ||
      typeof row.latencyMs !== 'number' ||
      !Array.isArray(row.calendarIds) ||
      !row.calendarIds.every((id) => typeof id === 'string') ||
      !textOrNull(row.keyId) ||
      !textOrNull(row.requestId) ||
      !textOrNull(row.errorCode) ||
      !optionalText(row.actorUserId) ||
      !optionalText(row.clientName) ||
      !optionalText(row.errorMessage) ||
      !optionalText(row.clientAddress) ||
      !(row.kind === undefined || row.kind === 'tool' || row.kind === 'dashboard') ||
      !(
        row.target === undefined ||
        (Array.isArray(row.target) && row.target.every((id) => typeof id === 'string'))
      ) ||
      at === undefined ||
      Number.isNaN(at.getTime())
    ) {
      return undefined;
    }
    return {
      entryId: row.entryId,
      tenantId: row.tenantId,
      keyId: row.keyId as string | null,
      requestId: row.requestId as string | null,
      tool: row.tool,
      calendarIds: row.calendarIds as string[],
      outcome: row.outcome as AuditRecord['outcome'],
      errorCode: row.errorCode as string | null,
      latencyMs: row.latencyMs,
      at,
      // Fields of dashboard rows and client names: kept when the line has them, as written.
      ...(row.kind === undefined ? {} : { kind: row.kind as AuditKind }),
      ...(row.actorUserId === undefined ? {} : { actorUserId: row.actorUserId as string | null }),
      ...(row.target === undefined ? {} : { target: row.target as string[] }),
      ...(row.clientName === undefined ? {} : { clientName: row.clientName as string | null }),
      ...(row.errorMessage === undefined ? {} : { errorMessage: row.errorMessage as string | null }),
      ...(row.clientAddress === undefined ? {} : { clientAddress: row.clientAddress as string | null }),
    };
  } catch {
    return undefined;
  }
}

/**
 * Audit rows that Postgres could not take in time, on local disk as JSON lines until it can.
 *
 * Each spill is its own segment file, written under a temporary name, synced, then renamed: a
 * visible segment is complete and never written again. Any process may therefore replay any
 * segment at any time, and deletes it only after every row is in Postgres. A crash between the
 * inserts and the delete leaves the segment for the next replay, which inserts nothing twice
 * because each row carries its `entryId` and the insert skips ids already present.
 */
export class AuditSpool {
  readonly dir: string;
  readonly #staleMs: number;
  readonly #now: () => number;

  constructor(dir: string, options: { staleMs?: number; now?: () => number } = {}) {
    this.dir = dir;
    // A temporary file this old belongs to a process that died while writing it.
    this.#staleMs = options.staleMs ?? 3_600_000;
    this.#now = options.now ?? Date.now;
  }

  /** Writes the rows as one new segment; they are on disk when this resolves. */
  async append(rows: readonly PendingAuditRecord[]): Promise<void> {
    if (rows.length === 0) {
      return;
    }
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const stamp = String(this.#now()).padStart(15, '0');
    const name = `audit-${stamp}-${process.pid}-${randomBytes(6).toString('hex')}`;
    const partial = join(this.dir, name + PARTIAL);
    const file = await open(partial, 'wx', 0o600);
    try {
      await file.writeFile(`${rows.map((row) => JSON.stringify(row)).join('\n')}\n`);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(partial, join(this.dir, name + SEGMENT));
    await this.#syncDir();
  }

  /** Segment files waiting (and temporary files left by a dead writer), oldest first. */
  async segments(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        return [];
      }
      throw error;
    }
    const found: string[] = [];
    for (const name of names.sort()) {
      if (name.endsWith(SEGMENT)) {
        found.push(join(this.dir, name));
      } else if (name.endsWith(PARTIAL)) {
        const info = await stat(join(this.dir, name)).catch(() => undefined);
        if (info !== undefined && this.#now() - info.mtimeMs > this.#staleMs) {
          found.push(join(this.dir, name));
        }
      }
    }
    return found;
  }

  /**
   * Passes the rows of the oldest segment to `insert` (in batches of at most `batch`), then
   * deletes it; undefined when no segment waits. `insert` must skip rows whose entryId is stored.
   */
  async replayOldest(
    insert: (rows: PendingAuditRecord[]) => Promise<void>,
    batch: number,
  ): Promise<SegmentReplay | undefined> {
    for (const path of await this.segments()) {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        // Another process replayed and deleted it meanwhile.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          continue;
        }
        throw error;
      }
      const rows: PendingAuditRecord[] = [];
      let unreadable = 0;
      for (const line of text.split('\n')) {
        if (line.trim() === '') {
          continue;
        }
        const row = parse(line);
        if (row === undefined) {
          unreadable += 1;
        } else {
          rows.push(row);
        }
      }
      for (let start = 0; start < rows.length; start += batch) {
        await insert(rows.slice(start, start + batch));
      }
      await unlink(path).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') {
          throw error;
        }
      });
      return { rows: rows.length, unreadable };
    }
    return undefined;
  }

  // The rename is durable only once the directory entry is.
  async #syncDir(): Promise<void> {
    const dir = await open(this.dir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }
}
