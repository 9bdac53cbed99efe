-- A key's own default calendar (what `primary` means for it) and time zone. Both are optional:
-- unset, Calgate chooses (see packages/store/src/key-access.ts).
ALTER TABLE "api_keys" ADD COLUMN "default_calendar_id" TEXT;
ALTER TABLE "api_keys" ADD COLUMN "time_zone" TEXT;

-- CreateIndex
CREATE INDEX "api_keys_default_calendar_id_tenant_id_idx" ON "api_keys"("default_calendar_id", "tenant_id");

-- AddForeignKey
-- Composite, so the default can only be a calendar of the key's own tenant. Deleting the calendar
-- clears only the default (a column list on SET NULL, PostgreSQL 15+); the key keeps its tenant.
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_default_calendar_id_tenant_id_fkey" FOREIGN KEY ("default_calendar_id", "tenant_id") REFERENCES "calendars"("id", "tenant_id") ON DELETE SET NULL ("default_calendar_id") ON UPDATE CASCADE;
