-- Listings read a calendar's rows in (start_at, event_id) order and stop after the first few.
-- With event_id in the index that order is the index's own: no incremental sort reading rows in
-- batches past the limit, and a listing across calendars merges the calendars' index scans and
-- stops after the first rows of all of them together (MirrorRepository.readFirst).
DROP INDEX "mirror_events_range_idx";
CREATE INDEX "mirror_events_range_idx" ON "mirror_events" ("calendar_id", "start_at", "event_id");
