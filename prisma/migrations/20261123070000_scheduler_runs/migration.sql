-- Scheduled prompts at run time: which repetition each delivered occurrence was, the event an
-- event-relative occurrence belongs to, and the agent a key's prompts go to by default.

-- AlterTable
-- 1 for the first occurrence delivered; missed occurrences carry none.
ALTER TABLE "deliveries" ADD COLUMN "repetition" INTEGER,
    ADD COLUMN "event_id" TEXT,
    ADD COLUMN "event_calendar_id" TEXT,
    ADD COLUMN "event_start" TIMESTAMPTZ(3),
    ADD CONSTRAINT "deliveries_repetition" CHECK ("repetition" IS NULL OR "repetition" >= 1),
    ADD CONSTRAINT "deliveries_event_id_length" CHECK ("event_id" IS NULL OR char_length("event_id") BETWEEN 1 AND 1024),
    -- An event-relative occurrence names its event whole: calendar, id and the start it was planned from.
    ADD CONSTRAINT "deliveries_event_whole" CHECK (("event_id" IS NULL) = ("event_calendar_id" IS NULL) AND ("event_id" IS NULL) = ("event_start" IS NULL));

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN "default_agent_id" TEXT,
    ADD CONSTRAINT "api_keys_default_agent_id_length" CHECK ("default_agent_id" IS NULL OR char_length("default_agent_id") BETWEEN 1 AND 200);

-- CreateIndex
-- The delivery log of a tenant, newest first, and the failures scheduler_status reports.
CREATE INDEX "deliveries_tenant_id_created_at_idx" ON "deliveries"("tenant_id", "created_at" DESC);
