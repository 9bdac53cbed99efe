import { searchTerms } from '@calgate/core';

/**
 * What a text query means, in the words every tool that takes one uses (search, search_events,
 * list_events): the same on every kind of calendar (@calgate/core's matcher). The short form is
 * for `search`, whose toolset may lack search_events; list_events points at search_events.
 */
export const QUERY_MEANING_SHORT =
  'All words, any order, at word starts (accents, case ignored) in title, description, location, attendee or organizer email/name.';
export const QUERY_MEANING = `${QUERY_MEANING_SHORT.slice(0, -1)}: 'caf' finds Café, 'acme.com' pat@acme.com.`;

/** Refusal of a query the matcher could find nothing for (no letters or digits at all). */
export const NO_WORDS = 'has no letters or digits to search for; give at least one word.';

/** Whether a query has a word to search for. */
export const hasWords = (query: string): boolean => searchTerms(query) !== null;
