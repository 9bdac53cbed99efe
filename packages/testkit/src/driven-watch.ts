/**
 * Announcements of changed calendars that the test sends: the shape of the mirror's
 * MirrorVersionWatch (the store's NOTIFY listener), for tests of what is kept until a change.
 */
export function drivenWatch(live = true) {
  const subscribers = new Set<{ changed(calendarId: string): void; reset(): void }>();
  const source = {
    live,
    subscribe(events: { changed(calendarId: string): void; reset(): void }) {
      subscribers.add(events);
      return () => {
        subscribers.delete(events);
      };
    },
    /** Something about the calendar changed. */
    announce(calendarId: string) {
      for (const s of subscribers) {
        s.changed(calendarId);
      }
    },
    /** The listening connection is lost: announcements may be missed from now on. */
    lose() {
      source.live = false;
      for (const s of subscribers) {
        s.reset();
      }
    },
  };
  return source;
}
