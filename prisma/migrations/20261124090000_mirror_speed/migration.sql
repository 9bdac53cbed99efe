-- Faster mirror search and window reads (issue 15).
--
-- Search: the accent-folded, lower-cased summary is stored (summary_folded), so neither the
-- trigram match nor the ranking calls mirror_unaccent per row; the trigram index moves to it.
--
-- A search ranks only the newest matches (MirrorRepository.search). For a common word, walking
-- the non-cancelled rows newest first (mirror_events_recent_idx, the calendar checked in the
-- index) finds them after a few thousand rows instead of visiting every match; for a rare word,
-- or calendars that are a small share of the table, the planner keeps to the text and calendar
-- indexes.
--
-- Window reads: a read asks for series masters, events overlapping the window, and exceptions
-- whose original start is in the window. Each part gets an index the planner can OR together,
-- instead of scanning every row of the calendar:
--   * masters: a partial index on (calendar_id, start_at) for rows with a recurrence;
--   * overlap: a GiST index on (calendar_id, [start_at, end_at]) (btree_gist for the text
--     column). The end is never below the start in the index (greatest), because tstzrange
--     rejects a lower bound above the upper one; the query keeps the exact start/end filters;
--   * exceptions: a partial index on (calendar_id, original_start).
-- btree_gist is trusted in PostgreSQL 13+, like unaccent and pg_trgm.

CREATE EXTENSION IF NOT EXISTS btree_gist;

ALTER TABLE "mirror_events" ADD COLUMN "summary_folded" TEXT
  GENERATED ALWAYS AS ("mirror_unaccent"(lower(coalesce("summary", '')))) STORED;

DROP INDEX "mirror_events_summary_trgm_idx";
CREATE INDEX "mirror_events_summary_folded_trgm_idx" ON "mirror_events"
  USING GIN ("summary_folded" gin_trgm_ops);

CREATE INDEX "mirror_events_recent_idx" ON "mirror_events"("start_at" DESC NULLS LAST, "calendar_id", "event_id")
  WHERE "status" <> 'cancelled';

CREATE INDEX "mirror_events_masters_idx" ON "mirror_events"("calendar_id", "start_at")
  WHERE cardinality("recurrence") > 0;
CREATE INDEX "mirror_events_span_idx" ON "mirror_events"
  USING GIST ("calendar_id", tstzrange("start_at", greatest("start_at", "end_at"), '[]'));
CREATE INDEX "mirror_events_original_start_idx" ON "mirror_events"("calendar_id", "original_start")
  WHERE "original_start" IS NOT NULL;
