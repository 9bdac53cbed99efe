-- The event mirror: each synced Google calendar's events kept in Postgres, per-calendar sync
-- state, and a change feed.
--
-- mirror_events holds masters, exceptions and single events as Google returns them with
-- singleEvents=false. A cancelled single event or master is deleted; a cancelled instance of a
-- series stays as a row with status 'cancelled', because it is what removes that occurrence when
-- the master is expanded. `raw` is the event resource as Google sent it (the fields tools
-- return); the other columns are what queries filter and sort on. `generation` is the full sync
-- that last saw the row: when a full sync ends, rows of older generations are gone upstream.
--
-- Search folds accents with unaccent (through an IMMUTABLE wrapper, since unaccent() itself is
-- only STABLE and cannot appear in a generated column or an index) and finds partial words with
-- prefix tsqueries and a trigram index on the summary. Both extensions are trusted in
-- PostgreSQL 13+, so a database owner may create them.

CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- The dictionary is named, so the result does not depend on the session's search_path.
CREATE FUNCTION "mirror_unaccent"(TEXT) RETURNS TEXT
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  AS $$ SELECT public.unaccent('public.unaccent'::regdictionary, $1) $$;

-- CreateTable
CREATE TABLE "mirror_events" (
    "calendar_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "recurring_event_id" TEXT,
    "original_start" TIMESTAMPTZ(3),
    "status" TEXT NOT NULL,
    "summary" TEXT,
    "description" TEXT,
    "location" TEXT,
    "all_day" BOOLEAN NOT NULL DEFAULT false,
    "start_at" TIMESTAMPTZ(3),
    "end_at" TIMESTAMPTZ(3),
    "start_date" TEXT,
    "end_date" TEXT,
    "start_time_zone" TEXT,
    "end_time_zone" TEXT,
    "recurrence" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "attendees" JSONB,
    "updated" TIMESTAMPTZ(3),
    "etag" TEXT,
    "raw" JSONB NOT NULL,
    "generation" INTEGER NOT NULL DEFAULT 1,
    "search" TSVECTOR GENERATED ALWAYS AS (
      to_tsvector('simple'::regconfig, "mirror_unaccent"(
        coalesce("summary", '') || ' ' || coalesce("description", '') || ' ' || coalesce("location", '')))
    ) STORED,

    CONSTRAINT "mirror_events_pkey" PRIMARY KEY ("calendar_id", "event_id")
);

CREATE INDEX "mirror_events_tenant_id_idx" ON "mirror_events"("tenant_id");
CREATE INDEX "mirror_events_range_idx" ON "mirror_events"("calendar_id", "start_at");
CREATE INDEX "mirror_events_series_idx" ON "mirror_events"("calendar_id", "recurring_event_id")
  WHERE "recurring_event_id" IS NOT NULL;
CREATE INDEX "mirror_events_search_idx" ON "mirror_events" USING GIN ("search");
CREATE INDEX "mirror_events_summary_trgm_idx" ON "mirror_events"
  USING GIN ("mirror_unaccent"(lower(coalesce("summary", ''))) gin_trgm_ops);

ALTER TABLE "mirror_events" ADD CONSTRAINT "mirror_events_calendar_fkey" FOREIGN KEY ("calendar_id", "tenant_id") REFERENCES "calendars"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- One row per mirrored calendar. sync_token is the token of the last completed sync (null until
-- the first full sync completes, and during a full sync). page_token is set while a sync is
-- between pages, so a sync that was stopped resumes from the next page.
CREATE TABLE "mirror_sync_state" (
    "calendar_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "sync_token" TEXT,
    "page_token" TEXT,
    "generation" INTEGER NOT NULL DEFAULT 1,
    "status" TEXT NOT NULL DEFAULT 'syncing',
    "error" TEXT,
    "synced_at" TIMESTAMPTZ(3),
    "full_sync_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mirror_sync_state_pkey" PRIMARY KEY ("calendar_id"),
    CONSTRAINT "mirror_sync_state_status_check" CHECK ("status" IN ('syncing', 'ok', 'error'))
);

CREATE INDEX "mirror_sync_state_tenant_id_idx" ON "mirror_sync_state"("tenant_id");

ALTER TABLE "mirror_sync_state" ADD CONSTRAINT "mirror_sync_state_calendar_fkey" FOREIGN KEY ("calendar_id", "tenant_id") REFERENCES "calendars"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The change feed: one row per event that changed in the mirror, in commit order (appends take
-- a transaction lock, so a consumer reading `id > cursor` never skips a row committed late).
CREATE TABLE "mirror_changes" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "calendar_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mirror_changes_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "mirror_changes_kind_check" CHECK ("kind" IN ('upsert', 'delete'))
);

CREATE INDEX "mirror_changes_calendar_idx" ON "mirror_changes"("calendar_id", "id");

ALTER TABLE "mirror_changes" ADD CONSTRAINT "mirror_changes_calendar_fkey" FOREIGN KEY ("calendar_id", "tenant_id") REFERENCES "calendars"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;
