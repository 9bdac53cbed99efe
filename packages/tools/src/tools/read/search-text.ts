/**
 * What a text query means, in the words every tool that takes one uses (search, search_events,
 * list_events): the same on every kind of calendar (@calgate/core's matcher).
 */
export const QUERY_MEANING =
  "All words must match (any order; accents, case ignored), each at a word start in title, description, location, attendee or organizer email/name ('caf' finds Café, 'acme.com' pat@acme.com).";
