-- Scheduled prompts: where they are delivered (targets), what is scheduled (schedules) and what
-- happened to each occurrence (deliveries). Every row is a tenant's; composite foreign keys
-- (…, tenant_id) keep a schedule's key, target and deliveries inside its tenant.

-- CreateTable
CREATE TABLE "delivery_targets" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "secret_key_id" TEXT NOT NULL,
    "sealed_secret" BYTEA NOT NULL,
    "default_agent_id" TEXT,
    "disabled_at" TIMESTAMPTZ(3),
    "disabled_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "delivery_targets_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "delivery_targets_kind" CHECK ("kind" IN ('webhook', 'letta')),
    CONSTRAINT "delivery_targets_name_length" CHECK (char_length("name") BETWEEN 1 AND 100),
    CONSTRAINT "delivery_targets_url_length" CHECK (char_length("url") BETWEEN 1 AND 2048),
    -- Only a Letta target names an agent to fall back on.
    CONSTRAINT "delivery_targets_default_agent_letta" CHECK ("default_agent_id" IS NULL OR "kind" = 'letta'),
    CONSTRAINT "delivery_targets_reason_when_disabled" CHECK ("disabled_reason" IS NULL OR "disabled_at" IS NOT NULL)
);

-- CreateTable
CREATE TABLE "schedules" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "target_id" TEXT,
    "agent_id" TEXT,
    "prompt" TEXT NOT NULL,
    "spec" JSONB NOT NULL,
    "next_run_at" TIMESTAMPTZ(3),
    "repetitions_done" INTEGER NOT NULL DEFAULT 0,
    "status" TEXT NOT NULL DEFAULT 'active',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "cancelled_at" TIMESTAMPTZ(3),

    CONSTRAINT "schedules_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "schedules_status" CHECK ("status" IN ('active', 'paused', 'cancelled', 'finished')),
    CONSTRAINT "schedules_prompt_length" CHECK (char_length("prompt") BETWEEN 1 AND 10000),
    CONSTRAINT "schedules_spec_object" CHECK (jsonb_typeof("spec") = 'object'),
    CONSTRAINT "schedules_repetitions_done" CHECK ("repetitions_done" >= 0),
    CONSTRAINT "schedules_cancelled_at" CHECK (("status" = 'cancelled') = ("cancelled_at" IS NOT NULL)),
    -- An active schedule always knows its next run; a cancelled or finished one has none.
    CONSTRAINT "schedules_next_run" CHECK (
        ("status" = 'active' AND "next_run_at" IS NOT NULL)
        OR "status" = 'paused'
        OR ("status" IN ('cancelled', 'finished') AND "next_run_at" IS NULL)
    )
);

-- CreateTable
CREATE TABLE "deliveries" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "schedule_id" TEXT NOT NULL,
    "occurrence_at" TIMESTAMPTZ(3) NOT NULL,
    "occurrence_id" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL DEFAULT 1,
    "status" TEXT NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "deliveries_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "deliveries_status" CHECK ("status" IN ('pending', 'delivered', 'failed', 'missed', 'retrying')),
    CONSTRAINT "deliveries_attempt" CHECK ("attempt" >= 1),
    CONSTRAINT "deliveries_status_code" CHECK ("status_code" IS NULL OR "status_code" BETWEEN 100 AND 599),
    CONSTRAINT "deliveries_error_length" CHECK ("error" IS NULL OR char_length("error") <= 2000),
    CONSTRAINT "deliveries_delivered_at" CHECK (("status" = 'delivered') = ("delivered_at" IS NOT NULL))
);

-- CreateIndex
CREATE UNIQUE INDEX "delivery_targets_id_tenant_id_key" ON "delivery_targets"("id", "tenant_id");

-- CreateIndex
-- Names are unique per tenant whatever their case.
CREATE UNIQUE INDEX "delivery_targets_tenant_id_name_key" ON "delivery_targets"("tenant_id", lower("name"));

-- CreateIndex
CREATE UNIQUE INDEX "schedules_id_tenant_id_key" ON "schedules"("id", "tenant_id");

-- CreateIndex
CREATE INDEX "schedules_status_next_run_at_idx" ON "schedules"("status", "next_run_at");

-- CreateIndex
CREATE INDEX "schedules_key_id_tenant_id_idx" ON "schedules"("key_id", "tenant_id");

-- CreateIndex
CREATE INDEX "schedules_target_id_tenant_id_idx" ON "schedules"("target_id", "tenant_id");

-- CreateIndex
-- The webhook-id of an occurrence: schedule id and scheduled instant, one row for all its attempts.
CREATE UNIQUE INDEX "deliveries_occurrence_id_key" ON "deliveries"("occurrence_id");

-- CreateIndex
CREATE INDEX "deliveries_schedule_id_tenant_id_occurrence_at_idx" ON "deliveries"("schedule_id", "tenant_id", "occurrence_at" DESC);

-- AddForeignKey
ALTER TABLE "delivery_targets" ADD CONSTRAINT "delivery_targets_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "schedules" ADD CONSTRAINT "schedules_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
-- A schedule belongs to the key that created it and goes with it.
ALTER TABLE "schedules" ADD CONSTRAINT "schedules_key_id_tenant_id_fkey" FOREIGN KEY ("key_id", "tenant_id") REFERENCES "api_keys"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
-- The repository refuses to delete a target that live schedules use; ended schedules keep their
-- history and forget only the target (a column list on SET NULL, PostgreSQL 15+).
ALTER TABLE "schedules" ADD CONSTRAINT "schedules_target_id_tenant_id_fkey" FOREIGN KEY ("target_id", "tenant_id") REFERENCES "delivery_targets"("id", "tenant_id") ON DELETE SET NULL ("target_id") ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_schedule_id_tenant_id_fkey" FOREIGN KEY ("schedule_id", "tenant_id") REFERENCES "schedules"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;
