/**
 * CalDAV and iCalendar: the iCalendar model (read, expand, write) and the CalDAV client the
 * `caldav` provider, the mirror's sync source and ICS import/export build on.
 */
export * from './client.ts';
export * from './feed.ts';
export * from './ical/index.ts';
export * from './ics-provider.ts';
export * from './ics-source.ts';
export * from './provider.ts';
export * from './sync.ts';
export * from './window.ts';
