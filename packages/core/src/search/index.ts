/**
 * The one meaning of a text search over events, for every kind of calendar (Calgate's own,
 * mirrored Google, Google read directly): the query's words in any order, every word found,
 * accents and case folded, each word matched at the beginning of a word of the event's summary,
 * description, location, attendees' emails and names, or organizer's email and name.
 *
 * Words: letters and digits. Everything else (spaces, `@`, `.`, `-`, `'` …) separates words, in
 * the event and in the query alike; a query word with such characters inside is a phrase of its
 * parts, the last matched as a beginning: `acme.com` is `acme com` and finds `pat@acme.com`;
 * `pat@acme` finds it too; `pat` finds `pat@acme.com` and `Pat Smith`; `caf` finds `Café`. Each
 * Han, Hiragana or Katakana character is a word of its own (those scripts put no spaces between
 * words), so `会議` finds `定例会議`.
 *
 * An event's text is reduced to a document (searchDocument): each field folded and cut into
 * words, the words joined by single spaces and the fields by ' | '. A query matches when every
 * term (searchTerms) occurs in ' ' + document right after a space. Stores keep the document in a
 * column and test the same thing in SQL (`' ' || doc LIKE '% term%'`), so both decide alike.
 */

/** Longer search text is cut: it is a query, not a document. */
export const SEARCH_TEXT_MAX = 200;
/** Query words beyond this many are dropped (every word must match, so more only narrow). */
export const SEARCH_TERMS_MAX = 20;

/** Joins fields in a document: never produced by words, so no term reaches across fields. */
const FIELD_SEPARATOR = ' | ';
const MARKS = /\p{M}+/gu;
/** Characters of scripts written without spaces, each taken as a word. */
const IDEOGRAPH = /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}])/gu;
const NOT_WORD = /[^\p{L}\p{N}]+/gu;

/**
 * Accents and case folded: compatibility decomposition (NFKD: `ﬁ` → `fi`, `①` → `1`), combining
 * marks removed (`é` → `e`), then full case folding as upper-then-lower case approximates it
 * (`ß` → `ss`, final `ς` → `σ`), decomposed and stripped once more.
 */
export function foldText(text: string): string {
  const once = text.normalize('NFKD').replace(MARKS, '');
  return once.toUpperCase().toLowerCase().normalize('NFKD').replace(MARKS, '');
}

/** The words of a text, folded, joined by single spaces ('' when it has none). */
export function searchWords(text: string): string {
  return foldText(text).replace(IDEOGRAPH, ' $1 ').replace(NOT_WORD, ' ').trim();
}

/** The fields of an event a search reads: Google's event resource and Calgate's events both fit. */
export interface SearchableEvent {
  summary?: string | null | undefined;
  description?: string | null | undefined;
  location?: string | null | undefined;
  attendees?: readonly SearchablePerson[] | null | undefined;
  organizer?: SearchablePerson | null | undefined;
}

export interface SearchablePerson {
  email?: string | null | undefined;
  displayName?: string | null | undefined;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The document a search matches an event against (see the module comment). */
export function searchDocument(event: SearchableEvent): string {
  const people = [event.organizer, ...(Array.isArray(event.attendees) ? event.attendees : [])];
  const fields = [
    text(event.summary),
    text(event.description),
    text(event.location),
    ...people.flatMap((person) =>
      person !== null && typeof person === 'object' ? [text(person.email), text(person.displayName)] : [],
    ),
  ];
  return fields
    .map(searchWords)
    .filter((words) => words !== '')
    .join(FIELD_SEPARATOR);
}

/**
 * The terms of a query: its whitespace-separated words (at most SEARCH_TERMS_MAX, from the first
 * SEARCH_TEXT_MAX characters), each folded and cut into words as documents are. A word of
 * punctuation only is dropped. Null when nothing is left: such a query matches nothing.
 */
export function searchTerms(query: string): string[] | null {
  const terms: string[] = [];
  for (const word of query.slice(0, SEARCH_TEXT_MAX).split(/\s+/u)) {
    const term = searchWords(word);
    if (term !== '' && !terms.includes(term)) {
      terms.push(term);
    }
  }
  return terms.length === 0 ? null : terms.slice(0, SEARCH_TERMS_MAX);
}

/** Whether a document (searchDocument) holds every term at the beginning of a word. */
export function documentMatches(document: string, terms: readonly string[]): boolean {
  const padded = ` ${document}`;
  return terms.every((term) => padded.includes(` ${term}`));
}

/** A query's matcher, built once for many events. Null when the query has no words. */
export function eventMatcher(query: string): ((event: SearchableEvent) => boolean) | null {
  const terms = searchTerms(query);
  return terms === null ? null : (event) => documentMatches(searchDocument(event), terms);
}
