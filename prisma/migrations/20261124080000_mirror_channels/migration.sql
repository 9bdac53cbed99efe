-- Google push channels (events.watch) on mirrored calendars. The channel id is a random UUID and
-- the token Google echoes back is an HMAC of it under a key derived from ENCRYPTION_KEY, so no
-- secret is stored here and any gateway can check a notification. last_message_number lets the
-- receiver ignore replays and out-of-order duplicates.
CREATE TABLE "mirror_channels" (
    "channel_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "calendar_id" TEXT NOT NULL,
    "resource_id" TEXT NOT NULL,
    "expiration" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_message_number" BIGINT NOT NULL DEFAULT 0,
    "last_notified_at" TIMESTAMPTZ(3),

    CONSTRAINT "mirror_channels_pkey" PRIMARY KEY ("channel_id")
);

CREATE INDEX "mirror_channels_calendar_idx" ON "mirror_channels"("calendar_id");
CREATE INDEX "mirror_channels_expiration_idx" ON "mirror_channels"("expiration");

ALTER TABLE "mirror_channels" ADD CONSTRAINT "mirror_channels_calendar_fkey" FOREIGN KEY ("calendar_id", "tenant_id") REFERENCES "calendars"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- When Google last said the calendar changed: the sync job can tell a pushed calendar from one
-- that only polling keeps fresh.
ALTER TABLE "mirror_sync_state" ADD COLUMN "pushed_at" TIMESTAMPTZ(3);
