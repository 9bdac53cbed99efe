-- A schedule relative to calendar events with no matching event in its planning window has no next
-- run, yet stays active: the worker plans it again every minute.
ALTER TABLE "schedules" DROP CONSTRAINT "schedules_next_run";
ALTER TABLE "schedules" ADD CONSTRAINT "schedules_next_run" CHECK (
    ("status" = 'active' AND ("next_run_at" IS NOT NULL OR "spec"->>'kind' = 'around_events'))
    OR "status" = 'paused'
    OR ("status" IN ('cancelled', 'finished') AND "next_run_at" IS NULL)
);
