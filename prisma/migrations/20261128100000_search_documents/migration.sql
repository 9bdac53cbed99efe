-- One search for every kind of calendar (packages/core/src/search): an event's summary,
-- description, location, attendees' and organizer's emails and names are folded (accents, case)
-- and cut into words by Calgate itself, and kept as `search_doc`: words joined by single spaces,
-- fields by ' | '. A query term (folded words joined by spaces) matches where it follows a space
-- in ' ' || search_doc, which SQL tests with LIKE and Calgate with the same string test, so a
-- store's answer and Calgate's own decision are the same. The document is written by Calgate on
-- every write; Postgres cannot compute it (unaccent and lower() fold differently from Unicode).
--
-- Mirror: the tsvector over summary, description and location, and the summary's trigram index,
-- gave way to a trigram index on ' ' || the document (the expression searches test with
-- LIKE '% term%'), by calendar first like the indexes it replaces. Every mirrored calendar syncs in full
-- once more, which writes every row's document: until that sync is done, reads go to Google.
-- A change to how documents are made needs a migration that does the same.
--
-- Local calendars: rows written before this migration have no document until `calgate migrate`
-- (or a gateway migrating at start) fills them in right after this migration, in batches through
-- the partial index below; meanwhile reads take them as candidates and Calgate decides on the
-- event (the same function), so nothing is missed.

DROP INDEX "mirror_events_search_idx";
ALTER TABLE "mirror_events" DROP COLUMN "search";
DROP INDEX "mirror_events_summary_folded_trgm_idx";
-- Never NULL, so a match is always true or false (rows stored before this migration hold '' until
-- the full sync below writes them again).
ALTER TABLE "mirror_events" ADD COLUMN "search_doc" TEXT NOT NULL DEFAULT '';
CREATE INDEX "mirror_events_search_doc_idx" ON "mirror_events"
  USING GIN ("calendar_id", (' ' || "search_doc") gin_trgm_ops);

UPDATE "mirror_sync_state"
   SET "sync_token" = NULL, "page_token" = NULL, "status" = 'syncing', "updated_at" = now();

ALTER TABLE "local_events" ADD COLUMN "search_doc" TEXT;
CREATE INDEX "local_events_search_doc_missing_idx" ON "local_events" ("calendar_id", "id")
  WHERE "search_doc" IS NULL;
