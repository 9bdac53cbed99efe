/**
 * Text search in SQL, deciding exactly as @calgate/core's matcher does. Each stored row keeps
 * `search_doc`, the document Calgate made of the event (searchDocument); a query's terms
 * (searchTerms) hold only letters, digits and single spaces. Calgate's test is
 * `(' ' + doc).includes(' ' + term)` for every term; SQL's is `' ' || search_doc LIKE '% term%'`:
 * the same substring test (LIKE compares characters exactly; nothing in a term is a wildcard, and
 * escaping keeps it so). Mirror rows always have a document; a local row written before
 * documents were kept has NULL, which matches nothing here (see LocalEventStore.listRange).
 */
import { searchTerms as coreSearchTerms, type SearchableEvent, searchDocument } from '@calgate/core';

export interface SearchTerms {
  /** The terms, as core's searchTerms makes them. */
  terms: string[];
  /** One LIKE pattern per term: `% term%`, wildcards escaped. */
  patterns: string[];
  /** The terms joined by spaces, for trigram similarity in the ranking. */
  text: string;
}

/** Null when the text has no letters or digits: nothing to search for. */
export function searchTerms(input: string): SearchTerms | null {
  const terms = coreSearchTerms(input);
  if (terms === null) {
    return null;
  }
  return {
    terms,
    patterns: terms.map((term) => `% ${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`),
    text: terms.join(' '),
  };
}

/**
 * The condition for the terms on rows aliased `alias`: every pattern found in the document, one
 * LIKE each on the expression the trigram indexes hold (`' ' || search_doc`). `param` adds a
 * parameter and returns its placeholder.
 */
export function matchSql(terms: SearchTerms, param: (value: unknown) => string, alias = 'e'): string {
  return `(${terms.patterns.map((pattern) => `(' ' || ${alias}.search_doc) LIKE ${param(pattern)}`).join(' AND ')})`;
}

/** The document of an event resource (Google's shape): what search_doc holds. */
export function documentOf(resource: Record<string, unknown>): string {
  // searchDocument reads only strings, arrays and objects where it expects them.
  return searchDocument(resource as SearchableEvent);
}
