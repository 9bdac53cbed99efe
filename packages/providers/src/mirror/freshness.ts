/**
 * The mirror's freshness rule (see provider.ts's module comment) for one connection's calendars:
 * whether a calendar's mirror may answer now, syncing it first when it is stale, with what this
 * process already knows: syncs it saw, states announcements have not outdated (mirror/trusted.ts),
 * and write-throughs that failed.
 */
import type { MirrorFreshness } from '@calgate/store';
import type { CalendarRef } from '../types.ts';
import type { MirrorBatches } from './batch.ts';
import type { MirrorConnection, MirrorReadDeps } from './provider.ts';
import { type MirrorVersionWatch, TrustedStates } from './trusted.ts';

/**
 * Whether the mirror may answer; `version`: the calendar's mirror version as read for the
 * decision, when no sync ran since (what was computed at that version still holds).
 */
export type Fresh = { ok: true; syncedAt: number; version?: string } | { ok: false; reason: string };

export class FreshnessRule {
  readonly #connection: MirrorConnection;
  readonly #deps: MirrorReadDeps;
  readonly #batch: MirrorBatches;
  readonly #now: () => number;
  /** Calendars whose last write-through failed: the next read syncs first. */
  readonly #dirty = new Set<string>();
  /** One sync per calendar at a time in this process; readers wait for the one running. */
  static readonly #syncing = new Map<string, Promise<number>>();
  /** States remembered per announcement source, shared by the providers hearing it. */
  static readonly #trusted = new WeakMap<MirrorVersionWatch, TrustedStates>();
  readonly #trustedStates: TrustedStates | undefined;

  constructor(connection: MirrorConnection, deps: MirrorReadDeps, batch: MirrorBatches) {
    this.#connection = connection;
    this.#deps = deps;
    this.#batch = batch;
    this.#now = deps.now ?? Date.now;
    if (deps.versions !== undefined) {
      let trusted = FreshnessRule.#trusted.get(deps.versions);
      if (trusted === undefined) {
        trusted = new TrustedStates(deps.versions);
        FreshnessRule.#trusted.set(deps.versions, trusted);
      }
      this.#trustedStates = trusted;
    }
  }

  /**
   * Whether the mirror may answer now, syncing first when it is stale; see provider.ts's module
   * comment. `version`: `always` reads the sync state unless announcements vouch for it, so the
   * answer carries the mirror's version; `if-known` does the same while announcements are heard
   * (the state read is then kept, and the next reads need none), and otherwise decides as
   * cheaply as without a version.
   */
  async check(calendar: CalendarRef, version: 'always' | 'if-known' | 'no' = 'no'): Promise<Fresh> {
    const now = this.#now();
    const dirty = this.#dirty.has(calendar.id);
    const trusted = version === 'no' ? undefined : this.#trustedStates?.get(calendar.id);
    if (!dirty && trusted !== undefined && trusted.syncedAt >= now - this.#deps.maxStalenessMs) {
      return { ok: true, ...trusted };
    }
    // A sync this process saw recently is enough: other processes' syncs only make it fresher.
    const known = knownSyncs.get(calendar.id);
    const withVersion =
      version === 'always' || (version === 'if-known' && this.#trustedStates?.live === true);
    if (!withVersion && !dirty && known !== undefined && known >= now - this.#deps.maxStalenessMs) {
      return { ok: true, syncedAt: known };
    }
    const mark = this.#trustedStates?.mark();
    let state: MirrorFreshness | undefined;
    try {
      state = await this.#batch.freshness(calendar.id);
    } catch (error) {
      this.#deps.onFallback?.(calendar.id, 'mirror unreadable', error);
      return { ok: false, reason: 'mirror unreadable' };
    }
    if (state === undefined || !state.ready) {
      await this.#deps.requestSync(this.#connection.tenantId, calendar.id).catch((error: unknown) => {
        this.#deps.onFallback?.(calendar.id, 'first sync could not be queued', error);
      });
      return { ok: false, reason: 'first sync not done' };
    }
    const synced = state.syncedAt ?? 0;
    const recent = synced >= now - this.#deps.maxStalenessMs;
    const pushedSince = state.pushedAt !== null && state.pushedAt > synced;
    const watchedQuiet = state.watched && !pushedSince;
    if (!dirty && recent) {
      rememberSync(calendar.id, synced);
      if (mark !== undefined) {
        this.#trustedStates?.remember(calendar.id, { syncedAt: synced, version: state.version }, mark);
      }
    }
    if (!dirty && (recent || watchedQuiet)) {
      return { ok: true, syncedAt: synced, version: state.version };
    }
    try {
      const syncedAt = await this.#syncNow(calendar);
      this.#trustedStates?.forget(calendar.id);
      this.#dirty.delete(calendar.id);
      rememberSync(calendar.id, syncedAt);
      return { ok: true, syncedAt };
    } catch (error) {
      this.#deps.onFallback?.(calendar.id, 'sync failed', error);
      return { ok: false, reason: 'sync failed' };
    }
  }

  /** The calendar's mirror missed a write done upstream: the next read syncs first. */
  markDirty(calendarId: string): void {
    this.#dirty.add(calendarId);
  }

  /** A write was stored in the calendar's mirror: what was trusted of its state is dropped. */
  written(calendarId: string): void {
    this.#trustedStates?.forget(calendarId);
  }

  /** Runs (or joins) an incremental sync; resolves to an instant no later than what it reflects. */
  #syncNow(calendar: CalendarRef): Promise<number> {
    const running = FreshnessRule.#syncing.get(calendar.id);
    if (running !== undefined) {
      return running;
    }
    const startedAt = this.#now();
    const sync = this.#deps
      .sync(this.#connection, calendar)
      .then(() => startedAt)
      .finally(() => FreshnessRule.#syncing.delete(calendar.id));
    FreshnessRule.#syncing.set(calendar.id, sync);
    return sync;
  }
}

/** The latest sync each calendar is known (in this process) to reflect. */
const knownSyncs = new Map<string, number>();
const KNOWN_SYNCS_MAX = 50_000;

function rememberSync(calendarId: string, at: number): void {
  if (knownSyncs.size >= KNOWN_SYNCS_MAX) {
    knownSyncs.clear();
  }
  knownSyncs.set(calendarId, Math.max(at, knownSyncs.get(calendarId) ?? 0));
}
