-- CreateEnum
CREATE TYPE "ConnectionProvider" AS ENUM ('google', 'local');

-- CreateEnum
CREATE TYPE "ConnectionAuth" AS ENUM ('oauth', 'service_account', 'none');

-- CreateEnum
CREATE TYPE "ConnectionStatus" AS ENUM ('active', 'needs_reauth', 'disabled');

-- CreateEnum
CREATE TYPE "AuditOutcome" AS ENUM ('ok', 'error', 'denied');

-- CreateTable
CREATE TABLE "tenants" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tenants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "users" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "password_hash" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "hash" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "connections" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "provider" "ConnectionProvider" NOT NULL,
    "account_email" TEXT NOT NULL,
    "auth" "ConnectionAuth" NOT NULL,
    "status" "ConnectionStatus" NOT NULL DEFAULT 'active',
    "status_detail" TEXT,
    "credentials_key_id" TEXT,
    "credentials_ciphertext" BYTEA,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "connections_pkey" PRIMARY KEY ("id"),
    -- A ciphertext is useless without the id of the key that sealed it.
    CONSTRAINT "connections_credentials_sealed" CHECK (("credentials_ciphertext" IS NULL) = ("credentials_key_id" IS NULL))
);

-- CreateTable
CREATE TABLE "calendars" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "connection_id" TEXT NOT NULL,
    "external_id" TEXT NOT NULL,
    "summary" TEXT NOT NULL,
    "description" TEXT,
    "time_zone" TEXT NOT NULL,
    "is_primary" BOOLEAN NOT NULL DEFAULT false,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "access_role" TEXT NOT NULL DEFAULT 'owner',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "calendars_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "grants" (
    "tenant_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "calendar_id" TEXT NOT NULL,
    "can_read" BOOLEAN NOT NULL,
    "can_write" BOOLEAN NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "grants_pkey" PRIMARY KEY ("key_id","calendar_id"),
    -- Write implies read.
    CONSTRAINT "grants_write_implies_read" CHECK (NOT "can_write" OR "can_read")
);

-- CreateTable
CREATE TABLE "audit_log" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "key_id" TEXT,
    "request_id" TEXT,
    "tool" TEXT NOT NULL,
    "calendar_ids" TEXT[],
    "outcome" "AuditOutcome" NOT NULL,
    "error_code" TEXT,
    "latency_ms" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "local_events" (
    "calendar_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "ical_uid" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'confirmed',
    "summary" TEXT,
    "description" TEXT,
    "location" TEXT,
    "all_day" BOOLEAN NOT NULL DEFAULT false,
    "start_at" TIMESTAMPTZ(3) NOT NULL,
    "end_at" TIMESTAMPTZ(3) NOT NULL,
    "start_date" TEXT,
    "end_date" TEXT,
    "start_time_zone" TEXT,
    "end_time_zone" TEXT,
    "recurrence" TEXT[],
    "series_end_at" TIMESTAMPTZ(3),
    "recurring_event_id" TEXT,
    "original_start_time" TIMESTAMPTZ(3),
    "attendees" JSONB,
    "reminders" JSONB,
    "transparency" TEXT NOT NULL DEFAULT 'opaque',
    "visibility" TEXT NOT NULL DEFAULT 'default',
    "color_id" TEXT,
    "sequence" INTEGER NOT NULL DEFAULT 0,
    "etag" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "local_events_pkey" PRIMARY KEY ("calendar_id","id"),
    CONSTRAINT "local_events_time_order" CHECK ("end_at" >= "start_at")
);

-- CreateIndex
CREATE INDEX "users_tenant_id_idx" ON "users"("tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys"("hash");

-- CreateIndex
CREATE INDEX "api_keys_tenant_id_idx" ON "api_keys"("tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_id_tenant_id_key" ON "api_keys"("id", "tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "connections_id_tenant_id_key" ON "connections"("id", "tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "connections_tenant_id_provider_account_email_key" ON "connections"("tenant_id", "provider", "account_email");

-- CreateIndex
CREATE INDEX "calendars_tenant_id_idx" ON "calendars"("tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "calendars_id_tenant_id_key" ON "calendars"("id", "tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "calendars_connection_id_external_id_key" ON "calendars"("connection_id", "external_id");

-- CreateIndex
CREATE INDEX "grants_calendar_id_idx" ON "grants"("calendar_id");

-- CreateIndex
CREATE INDEX "audit_log_tenant_id_created_at_idx" ON "audit_log"("tenant_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "local_events_calendar_id_start_at_idx" ON "local_events"("calendar_id", "start_at");

-- CreateIndex
CREATE INDEX "local_events_calendar_id_recurring_event_id_idx" ON "local_events"("calendar_id", "recurring_event_id");

-- AddForeignKey
ALTER TABLE "users" ADD CONSTRAINT "users_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "connections" ADD CONSTRAINT "connections_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "calendars" ADD CONSTRAINT "calendars_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "calendars" ADD CONSTRAINT "calendars_connection_id_tenant_id_fkey" FOREIGN KEY ("connection_id", "tenant_id") REFERENCES "connections"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "grants" ADD CONSTRAINT "grants_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "grants" ADD CONSTRAINT "grants_key_id_tenant_id_fkey" FOREIGN KEY ("key_id", "tenant_id") REFERENCES "api_keys"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "grants" ADD CONSTRAINT "grants_calendar_id_tenant_id_fkey" FOREIGN KEY ("calendar_id", "tenant_id") REFERENCES "calendars"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "local_events" ADD CONSTRAINT "local_events_calendar_id_fkey" FOREIGN KEY ("calendar_id") REFERENCES "calendars"("id") ON DELETE CASCADE ON UPDATE CASCADE;
