/**
 * Graph events and calendars ↔ Calgate's shapes. Reads carry over what Calgate's vocabulary
 * has (Google-shaped); writes send Graph's own properties only (`subject`, `body`, `showAs` …),
 * and refuse what Outlook cannot store rather than dropping it. Calendars and the account are read
 * in `calendars-from-graph.ts`, events in `event-from-graph.ts` and written in `event-to-graph.ts`.
 */
export {
  accountEmailOf,
  type MicrosoftCalendarInfo,
  mailboxZoneOf,
  toCalendarInfo,
} from './calendars-from-graph.ts';
export { type GraphEventFacts, toCalendarEvent } from './event-from-graph.ts';
export { type GraphEventBody, toGraphEvent, type WriteContext } from './event-to-graph.ts';
export { htmlToText } from './graph-values.ts';

/** Ask Graph for bodies as plain text (the `Prefer` header every event read sends). */
export const PREFER_TEXT_BODY = 'outlook.body-content-type="text"';
