/**
 * Confirmed bookings as the availability tools read them (every find_free_time, find_free_slots,
 * check_availability and get_availability asks the ledger for the window), kept per tenant,
 * calendars and window while nothing about those calendars was announced: every change of a
 * booking row is announced on the mirror's channel (`NOTIFY mirror_versions, '<calendarId>'`,
 * sent by a trigger when it commits, whichever process wrote it), as changes of a calendar's
 * mirror are. Like the mirror's trusted sync states (providers' mirror/trusted.ts): nothing is
 * kept while the announcements may be missed (the listening connection is down), a read that an
 * announcement overtook is not kept, and a write through this process forgets at once (before its
 * announcement comes back). book_slot's own checks (`overlapping`) always read the ledger.
 */
import { Announcements, type MirrorVersionWatch, type ReadMark } from '@calgate/providers';
import type { BookingRecord } from '@calgate/store';

interface Entry {
  calendarIds: readonly string[];
  rows: readonly BookingRecord[];
  /** Where its read began. */
  mark: ReadMark;
}

const MAX_ENTRIES = 4_000;
/** Rows kept in all (a calendar with many bookings in a window is read each time). */
const MAX_ROWS = 50_000;
const MAX_ROWS_PER_ENTRY = 500;

export class ConfirmedBookingsCache {
  readonly #announcements: Announcements;
  readonly #entries = new Map<string, Entry>();
  #rows = 0;

  constructor(watch: MirrorVersionWatch) {
    // Entries are checked when read (see #valid); a reset drops them all at once.
    this.#announcements = new Announcements(watch, undefined, () => {
      this.#entries.clear();
      this.#rows = 0;
    });
  }

  /** Something about the calendar's bookings changed: nothing read of it before is used again. */
  changed(calendarId: string): void {
    this.#announcements.changed(calendarId);
  }

  /** Forgets everything (announcements may have been missed, or a write's calendar is unknown). */
  reset(): void {
    this.#announcements.reset();
  }

  /** The calendars' confirmed bookings in [start, end): kept ones, or `read`'s (then kept). */
  async confirmedIn(
    tenantId: string,
    calendarIds: readonly string[],
    start: Date,
    end: Date,
    read: () => Promise<BookingRecord[]>,
  ): Promise<BookingRecord[]> {
    const key = `${tenantId}\u0000${start.getTime()}\u0000${end.getTime()}\u0000${calendarIds.join('\u0000')}`;
    const kept = this.#entries.get(key);
    if (kept !== undefined) {
      if (this.#valid(kept)) {
        return [...kept.rows];
      }
      this.#drop(key, kept);
    }
    const mark = this.#announcements.mark();
    const rows = await read();
    const entry: Entry = { calendarIds: [...calendarIds], rows: Object.freeze([...rows]), mark };
    if (rows.length <= MAX_ROWS_PER_ENTRY && this.#valid(entry)) {
      const other = this.#entries.get(key);
      if (other !== undefined) {
        this.#drop(key, other);
      }
      this.#entries.set(key, entry);
      this.#rows += rows.length;
      for (const [oldest, old] of this.#entries) {
        if (this.#entries.size <= MAX_ENTRIES && this.#rows <= MAX_ROWS) {
          break;
        }
        this.#drop(oldest, old);
      }
    }
    return rows;
  }

  /** Heard live since the read began, and nothing about its calendars announced since. */
  #valid(entry: Entry): boolean {
    return this.#announcements.unchangedSince(entry.mark, entry.calendarIds);
  }

  #drop(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#rows -= entry.rows.length;
  }

  get size(): number {
    return this.#entries.size;
  }
}
