/**
 * What a process read and may keep using without reading it again, because it hears of every
 * change (MirrorVersionWatch: Postgres's NOTIFY, sent when a calendar's events or bookings change,
 * its full sync starts over or its mirror is dropped). Announcements are numbered
 * (`Announcements`): a read is kept only if nothing about its calendars was announced after it
 * began and the announcements were heard throughout; everything is forgotten when they may have
 * been missed (the listening connection was lost). `TrustedStates` keeps calendars' sync states
 * so; the gateway's confirmed-bookings cache keeps ledger reads so.
 */

/** Announcements of changed mirror state (the store's MirrorVersionListener). */
export interface MirrorVersionWatch {
  /** Whether announcements are being heard now: nothing is trusted otherwise. */
  readonly live: boolean;
  subscribe(events: { changed(calendarId: string): void; reset(): void }): () => void;
}

export interface TrustedState {
  syncedAt: number;
  version: string;
}

/** Where a read began: what it remembers is kept only if nothing about it was announced since. */
export interface ReadMark {
  seq: number;
  resets: number;
}

/** Calendars whose last announcement is remembered; more forget everything (as if missed). */
const MAX_CALENDARS = 50_000;

/** A watch's announcements, numbered, so that a read can tell whether one overtook it. */
export class Announcements {
  readonly #watch: MirrorVersionWatch;
  readonly #onChanged: (calendarId: string) => void;
  readonly #onReset: () => void;
  /** The announcement number of each calendar's last change. */
  readonly #changed = new Map<string, number>();
  #seq = 0;
  #resets = 0;

  /** Hears `watch`; `onChanged` and `onReset` let the owner drop what it kept at once. */
  constructor(
    watch: MirrorVersionWatch,
    onChanged: (calendarId: string) => void = () => {},
    onReset: () => void = () => {},
  ) {
    this.#watch = watch;
    this.#onChanged = onChanged;
    this.#onReset = onReset;
    watch.subscribe({ changed: (calendarId) => this.changed(calendarId), reset: () => this.reset() });
  }

  /** Whether announcements are heard now. */
  get live(): boolean {
    return this.#watch.live;
  }

  mark(): ReadMark {
    return { seq: this.#seq, resets: this.#resets };
  }

  /** Something about the calendar changed (announced, or written by this process). */
  changed(calendarId: string): void {
    this.#seq += 1;
    this.#changed.set(calendarId, this.#seq);
    this.#onChanged(calendarId);
    if (this.#changed.size > MAX_CALENDARS) {
      this.reset();
    }
  }

  /** Anything may have changed (announcements missed, or a change whose calendar is unknown). */
  reset(): void {
    this.#changed.clear();
    this.#resets += 1;
    this.#onReset();
  }

  /** Whether announcements are heard, were throughout since `mark`, and named none of `calendarIds` since. */
  unchangedSince(mark: ReadMark, calendarIds: Iterable<string>): boolean {
    if (!this.#watch.live || mark.resets !== this.#resets) {
      return false;
    }
    for (const calendarId of calendarIds) {
      if ((this.#changed.get(calendarId) ?? 0) > mark.seq) {
        return false;
      }
    }
    return true;
  }
}

export class TrustedStates {
  readonly #states = new Map<string, TrustedState>();
  readonly #announcements: Announcements;

  constructor(watch: MirrorVersionWatch) {
    this.#announcements = new Announcements(
      watch,
      (calendarId) => this.#states.delete(calendarId),
      () => this.#states.clear(),
    );
  }

  /** Whether announcements are heard now, so that a state read can be kept. */
  get live(): boolean {
    return this.#announcements.live;
  }

  get(calendarId: string): TrustedState | undefined {
    return this.#announcements.live ? this.#states.get(calendarId) : undefined;
  }

  mark(): ReadMark {
    return this.#announcements.mark();
  }

  /** Keeps a state read since `mark`, unless something about the calendar was announced since. */
  remember(calendarId: string, state: TrustedState, mark: ReadMark): void {
    if (this.#announcements.unchangedSince(mark, [calendarId]) && this.#states.size < MAX_CALENDARS) {
      this.#states.set(calendarId, state);
    }
  }

  forget(calendarId: string): void {
    this.#states.delete(calendarId);
  }
}
