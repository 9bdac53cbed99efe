-- The workspace's time zone (IANA), set by the dashboard's first-run form and its settings. A key
-- without a zone of its own answers in it before falling back to its default calendar's zone.
-- Null for workspaces from before this column, which keep answering as they did.
ALTER TABLE "tenants" ADD COLUMN "time_zone" TEXT;
