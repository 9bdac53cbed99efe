-- Secret iCalendar feed addresses: one live feed per calendar, its token kept only as a SHA-256
-- hash; revoking sets revoked_at and the address stops at once.
CREATE TABLE "calendar_feeds" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "calendar_id" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "created_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),
    CONSTRAINT "calendar_feeds_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "calendar_feeds_token_hash_key" ON "calendar_feeds"("token_hash");
CREATE UNIQUE INDEX "calendar_feeds_live_key" ON "calendar_feeds"("calendar_id") WHERE "revoked_at" IS NULL;
CREATE INDEX "calendar_feeds_tenant_id_idx" ON "calendar_feeds"("tenant_id");
ALTER TABLE "calendar_feeds" ADD CONSTRAINT "calendar_feeds_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "calendar_feeds" ADD CONSTRAINT "calendar_feeds_calendar_id_fkey"
    FOREIGN KEY ("calendar_id") REFERENCES "calendars"("id") ON DELETE CASCADE ON UPDATE CASCADE;
