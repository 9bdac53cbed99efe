-- Mirror tombstones: a delete written through the mirror (or a sync's delete) leaves the event's
-- id and when it was deleted, so a sync page read from the upstream before the delete and applied
-- after it cannot store the event again (see applyEvents in the mirror repository). A copy
-- changed upstream after the delete (its `updated` later than `deleted_at`) is stored. Tombstones
-- older than an hour, far longer than a sync takes, are removed when a sync ends.

-- CreateTable
CREATE TABLE "mirror_tombstones" (
    "calendar_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "deleted_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "mirror_tombstones_pkey" PRIMARY KEY ("calendar_id", "event_id")
);

CREATE INDEX "mirror_tombstones_tenant_id_idx" ON "mirror_tombstones"("tenant_id");

ALTER TABLE "mirror_tombstones" ADD CONSTRAINT "mirror_tombstones_calendar_fkey" FOREIGN KEY ("calendar_id", "tenant_id") REFERENCES "calendars"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;
