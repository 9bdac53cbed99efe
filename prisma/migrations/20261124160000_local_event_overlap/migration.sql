-- A listing of a local calendar reads the rows that can touch its window, not every row from the
-- calendar's first event on (LocalEventStore.listRange): single events and exceptions through
-- one overlap probe of [start, end] (btree_gist, created by an earlier migration), series
-- masters and exceptions through partial indexes (there are few of those).
CREATE INDEX "local_events_overlap_idx" ON "local_events"
  USING GIST ("calendar_id", tstzrange("start_at", greatest("start_at", "end_at"), '[]'));
CREATE INDEX "local_events_masters_idx" ON "local_events" ("calendar_id")
  WHERE cardinality("recurrence") > 0;
