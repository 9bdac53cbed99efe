/**
 * Calendars' sync states a process read and may keep using without reading them again, because
 * it hears of every change (MirrorVersionWatch: Postgres's NOTIFY, sent when a calendar's events
 * change, its full sync starts over or its mirror is dropped). A state is forgotten when its
 * calendar is announced, when this process writes to it, and all are when the announcements may
 * have been missed (the listening connection was lost). A read that an announcement overtook
 * (sent after the read began) is not kept.
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

const MAX_CALENDARS = 50_000;

export class TrustedStates {
  readonly #watch: MirrorVersionWatch;
  readonly #states = new Map<string, TrustedState>();
  /** The announcement number of each calendar's last change. */
  readonly #changed = new Map<string, number>();
  #seq = 0;
  #resets = 0;

  constructor(watch: MirrorVersionWatch) {
    this.#watch = watch;
    watch.subscribe({
      changed: (calendarId) => {
        this.#seq += 1;
        this.#changed.set(calendarId, this.#seq);
        this.#states.delete(calendarId);
        if (this.#changed.size > MAX_CALENDARS) {
          this.#reset();
        }
      },
      reset: () => this.#reset(),
    });
  }

  #reset(): void {
    this.#states.clear();
    this.#changed.clear();
    this.#resets += 1;
  }

  /** Whether announcements are heard now, so that a state read can be kept. */
  get live(): boolean {
    return this.#watch.live;
  }

  get(calendarId: string): TrustedState | undefined {
    return this.#watch.live ? this.#states.get(calendarId) : undefined;
  }

  mark(): ReadMark {
    return { seq: this.#seq, resets: this.#resets };
  }

  /** Keeps a state read since `mark`, unless something about the calendar was announced since. */
  remember(calendarId: string, state: TrustedState, mark: ReadMark): void {
    if (
      this.#watch.live &&
      mark.resets === this.#resets &&
      (this.#changed.get(calendarId) ?? 0) <= mark.seq &&
      this.#states.size < MAX_CALENDARS
    ) {
      this.#states.set(calendarId, state);
    }
  }

  forget(calendarId: string): void {
    this.#states.delete(calendarId);
  }
}
