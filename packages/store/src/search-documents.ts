/**
 * Search documents of local events (see @calgate/core's search and mirror/search.ts): made when a
 * row is written, and filled in once for rows written before documents were kept.
 */
import { type SearchablePerson, searchDocument } from '@calgate/core';
import type pg from 'pg';

/** The local event fields a search reads (local events record no organizer). */
export const SEARCHED_FIELDS = ['summary', 'description', 'location', 'attendees'] as const;

export interface SearchedFields {
  summary: string | null;
  description: string | null;
  location: string | null;
  attendees: unknown;
}

/** What search_doc holds for a local row: the document of the event the row becomes. */
export function localDocument(row: SearchedFields): string {
  return searchDocument({
    summary: row.summary,
    description: row.description,
    location: row.location,
    attendees: Array.isArray(row.attendees) ? (row.attendees as SearchablePerson[]) : null,
  });
}

/** The migration that started keeping documents; the fill runs once it is applied. */
export const SEARCH_DOCUMENTS_MIGRATION = '20261128100000_search_documents';

/**
 * Gives every local row without a document its document, `batch` rows at a time (a row changed
 * meanwhile is read again). Returns how many were filled; nothing to do costs one index probe.
 */
export async function fillSearchDocuments(
  client: Pick<pg.PoolClient, 'query'>,
  batch = 1000,
): Promise<number> {
  let filled = 0;
  for (;;) {
    const { rows } = await client.query<SearchedFields & { calendar_id: string; id: string; etag: string }>(
      `SELECT calendar_id, id, etag, summary, description, location, attendees
       FROM local_events WHERE search_doc IS NULL LIMIT $1`,
      [batch],
    );
    if (rows.length === 0) {
      return filled;
    }
    const { rowCount } = await client.query(
      `UPDATE local_events l SET search_doc = d.doc
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS d(calendar_id, id, etag, doc)
       WHERE l.calendar_id = d.calendar_id AND l.id = d.id AND l.etag = d.etag AND l.search_doc IS NULL`,
      [
        rows.map((row) => row.calendar_id),
        rows.map((row) => row.id),
        rows.map((row) => row.etag),
        rows.map(localDocument),
      ],
    );
    filled += rowCount ?? 0;
  }
}
