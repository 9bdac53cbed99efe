-- The booking ledger: overlapping confirmed bookings of one calendar are impossible, whatever
-- happened to the lock that guarded them.
CREATE EXTENSION IF NOT EXISTS btree_gist;

-- CreateTable
CREATE TABLE "bookings" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "key_id" TEXT,
    "calendar_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "during" TSTZRANGE NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'confirmed',
    "idempotency_key" TEXT,
    "request_hash" TEXT,
    "result" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "bookings_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "bookings_status" CHECK ("status" IN ('confirmed', 'cancelled')),
    CONSTRAINT "bookings_not_empty" CHECK (NOT isempty("during")),
    CONSTRAINT "bookings_no_overlap" EXCLUDE USING gist ("calendar_id" WITH =, "during" WITH &&) WHERE ("status" = 'confirmed')
);

-- CreateIndex
-- One booking per idempotency key and API key; NULLS NOT DISTINCT (PostgreSQL 15+) so a key-less
-- booking cannot reuse one either. Partial, so bookings without an idempotency key are free.
CREATE UNIQUE INDEX "bookings_idempotency_key" ON "bookings"("tenant_id", "key_id", "idempotency_key") NULLS NOT DISTINCT WHERE "idempotency_key" IS NOT NULL;

-- CreateIndex
CREATE INDEX "bookings_calendar_id_idx" ON "bookings"("calendar_id");

-- AddForeignKey
ALTER TABLE "bookings" ADD CONSTRAINT "bookings_calendar_id_tenant_id_fkey" FOREIGN KEY ("calendar_id", "tenant_id") REFERENCES "calendars"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "bookings" ADD CONSTRAINT "bookings_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
