import type { LocalEventRow, LocalEventStore } from '@calgate/store';
import type { CalendarRef } from '../types.ts';
import { toEvent } from './rows.ts';
import { expandSeries } from './times.ts';

/**
 * Keeps a series' exceptions in line with a changed master. New times regenerate every
 * occurrence, so changes made to single ones are discarded (as Google Calendar does); a changed
 * rule (e.g. ended by a split) drops only the exceptions of occurrences it no longer has.
 */
export async function reconcileExceptions(
  store: LocalEventStore,
  calendar: CalendarRef,
  before: LocalEventRow,
  after: LocalEventRow,
): Promise<void> {
  const timesChanged =
    after.startAt.getTime() !== before.startAt.getTime() || after.endAt.getTime() !== before.endAt.getTime();
  if (timesChanged) {
    await store.deleteExceptions(calendar.id, before.id);
    return;
  }
  if (after.recurrence.join('\n') === before.recurrence.join('\n')) {
    return;
  }
  const exceptions = await store.exceptionsOf(calendar.id, before.id);
  const master = toEvent(after, calendar);
  const orphaned = exceptions
    .filter((exception) => {
      const original = exception.originalStartTime?.getTime();
      if (original === undefined) {
        return false;
      }
      const still = expandSeries(
        {
          recurrence: after.recurrence,
          start: master.start,
          end: master.end,
          defaultTimeZone: calendar.timeZone,
        },
        { from: original, to: original + 1, limit: 1 },
      );
      return !(still.ok && still.value.some((instance) => instance.startMs === original));
    })
    .map((exception) => exception.id);
  if (orphaned.length > 0) {
    await store.deleteExceptions(calendar.id, before.id, orphaned);
  }
}
