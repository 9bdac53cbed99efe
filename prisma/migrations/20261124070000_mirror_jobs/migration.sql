-- When a mirrored calendar was last read through Calgate. The mirror's planner polls calendars
-- read within the last day more often than the others (polling is the fallback when Google's
-- push notifications do not come). A table of its own, so a read never contends with the row
-- lock a sync holds on mirror_sync_state.
CREATE TABLE "mirror_reads" (
    "calendar_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "last_read_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mirror_reads_pkey" PRIMARY KEY ("calendar_id")
);

CREATE INDEX "mirror_reads_last_read_at_idx" ON "mirror_reads"("last_read_at");

ALTER TABLE "mirror_reads" ADD CONSTRAINT "mirror_reads_calendar_fkey" FOREIGN KEY ("calendar_id", "tenant_id") REFERENCES "calendars"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;
