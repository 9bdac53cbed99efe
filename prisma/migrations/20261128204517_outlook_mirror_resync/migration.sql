-- Outlook mirror rows now keep each all-day event's own zone (free/busy puts its midnights there,
-- as Graph does) and the account's own answer to an invitation (a declined one is free). Rows
-- synced before lack both, so every Outlook calendar's mirror syncs again in full: not ready
-- meanwhile (reads ask Graph), a new generation (rows the new sync does not list are swept) and a
-- new version (free/busy answers kept for the old rows are not used again), announced to the
-- gateways listening on mirror_versions (delivered when the migration commits).
WITH outlook AS (
UPDATE mirror_sync_state
SET sync_token = NULL,
    page_token = NULL,
    status = 'syncing',
    generation = generation + 1,
    version = nextval('mirror_version_seq'),
    updated_at = now()
WHERE calendar_id IN (
  SELECT c.id FROM calendars c JOIN connections n ON n.id = c.connection_id WHERE n.provider = 'microsoft'
)
RETURNING calendar_id
)
SELECT count(pg_notify('mirror_versions', calendar_id)) FROM outlook;
