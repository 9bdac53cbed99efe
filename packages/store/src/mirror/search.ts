/**
 * Mirror search terms. Text is matched two ways, both accent-folded by mirror_unaccent in SQL:
 * every word as a prefix in the `search` tsvector (summary, description, location: 'meet' finds
 * 'meeting'), or the whole text anywhere in the summary through the trigram index ('eeting'
 * finds 'Meeting'). Only letters and digits reach to_tsquery, so user text cannot break its syntax.
 */

export interface SearchTerms {
  /** `word:* & word:*`, to pass through mirror_unaccent into to_tsquery('simple', …). */
  prefixQuery: string;
  /** A LIKE pattern (`%text%`, wildcards escaped) for the lower-cased summary. */
  summaryPattern: string;
  /** The lower-cased text, for trigram similarity in the ranking. */
  text: string;
}

const WORD = /[\p{L}\p{N}]+/gu;
/** Longer search text is cut: it is a query, not a document. */
export const SEARCH_TEXT_MAX = 200;

/** Null when the text has no letters or digits: nothing to search for. */
export function searchTerms(input: string): SearchTerms | null {
  const text = input.normalize('NFC').trim().toLowerCase().slice(0, SEARCH_TEXT_MAX);
  const words = text.match(WORD);
  if (words === null) {
    return null;
  }
  return {
    prefixQuery: words.map((word) => `${word}:*`).join(' & '),
    summaryPattern: `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`,
    text,
  };
}

/**
 * The WHERE fragment for terms at parameters $p (prefix query) and $p+1 (summary pattern), on
 * mirror_events aliased `e`. summary_folded is mirror_unaccent(lower(summary)), stored.
 */
export function matchSql(p: number): string {
  return `(e.search @@ to_tsquery('simple', mirror_unaccent($${p}))
    OR e.summary_folded LIKE mirror_unaccent($${p + 1}))`;
}
