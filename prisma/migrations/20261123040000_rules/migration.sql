-- Projects, classification rules and the classification of each event occurrence. Every row is
-- a tenant's; composite foreign keys (…, tenant_id) make a rule that files time into another
-- tenant's project, or a classification of another tenant's calendar, impossible (as for grants).

-- A rule may name the user who wrote it; the composite key keeps that user in the rule's tenant.
-- CreateIndex
CREATE UNIQUE INDEX "users_id_tenant_id_key" ON "users"("id", "tenant_id");

-- CreateTable
CREATE TABLE "projects" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "client" TEXT,
    "colour" TEXT NOT NULL,
    "archived_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "projects_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "projects_name_length" CHECK (char_length("name") BETWEEN 1 AND 100),
    CONSTRAINT "projects_client_length" CHECK ("client" IS NULL OR char_length("client") BETWEEN 1 AND 100),
    CONSTRAINT "projects_colour_hex" CHECK ("colour" ~ '^#[0-9a-f]{6}$')
);

-- CreateTable
CREATE TABLE "rules" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "query" TEXT NOT NULL,
    "weight" INTEGER NOT NULL DEFAULT 1,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "created_by_key_id" TEXT,
    "created_by_user_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "rules_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "rules_query_length" CHECK (char_length("query") BETWEEN 1 AND 2000),
    CONSTRAINT "rules_weight_range" CHECK ("weight" BETWEEN 1 AND 1000),
    -- Written by a key or by a user, never both; both are null only once the author is deleted.
    CONSTRAINT "rules_one_author" CHECK (num_nonnulls("created_by_key_id", "created_by_user_id") <= 1)
);

-- CreateTable
CREATE TABLE "classifications" (
    "tenant_id" TEXT NOT NULL,
    "calendar_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "project_id" TEXT,
    "skip" BOOLEAN NOT NULL DEFAULT false,
    "source" TEXT NOT NULL,
    "confidence" REAL NOT NULL,
    "needs_review" BOOLEAN NOT NULL DEFAULT false,
    "start_at" TIMESTAMPTZ(3) NOT NULL,
    "end_at" TIMESTAMPTZ(3) NOT NULL,
    "rule_ids" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "classifications_pkey" PRIMARY KEY ("tenant_id", "calendar_id", "event_id"),
    CONSTRAINT "classifications_event_id_length" CHECK (char_length("event_id") BETWEEN 1 AND 2048),
    CONSTRAINT "classifications_source" CHECK ("source" IN ('rule', 'manual')),
    -- A project, or skip, or (from rules only) neither: pending, the rules could not decide.
    CONSTRAINT "classifications_skip_has_no_project" CHECK (NOT ("skip" AND "project_id" IS NOT NULL)),
    CONSTRAINT "classifications_manual_decides" CHECK ("source" = 'rule' OR "skip" OR "project_id" IS NOT NULL),
    CONSTRAINT "classifications_confidence_range" CHECK ("confidence" >= 0 AND "confidence" <= 1),
    CONSTRAINT "classifications_time_order" CHECK ("end_at" >= "start_at")
);

-- CreateIndex
CREATE UNIQUE INDEX "projects_id_tenant_id_key" ON "projects"("id", "tenant_id");

-- CreateIndex
-- Names are unique per tenant whatever their case; archived projects keep theirs.
CREATE UNIQUE INDEX "projects_tenant_id_name_key" ON "projects"("tenant_id", lower("name"));

-- CreateIndex
CREATE INDEX "rules_tenant_id_enabled_idx" ON "rules"("tenant_id", "enabled");

-- CreateIndex
CREATE INDEX "rules_project_id_tenant_id_idx" ON "rules"("project_id", "tenant_id");

-- CreateIndex
CREATE INDEX "rules_created_by_key_id_tenant_id_idx" ON "rules"("created_by_key_id", "tenant_id");

-- CreateIndex
CREATE INDEX "rules_created_by_user_id_tenant_id_idx" ON "rules"("created_by_user_id", "tenant_id");

-- CreateIndex
CREATE INDEX "classifications_tenant_id_calendar_id_start_at_idx" ON "classifications"("tenant_id", "calendar_id", "start_at");

-- CreateIndex
CREATE INDEX "classifications_project_id_tenant_id_idx" ON "classifications"("project_id", "tenant_id");

-- AddForeignKey
ALTER TABLE "projects" ADD CONSTRAINT "projects_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "rules" ADD CONSTRAINT "rules_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
-- A project cannot be deleted while rules file time into it: delete or move them first.
ALTER TABLE "rules" ADD CONSTRAINT "rules_project_id_tenant_id_fkey" FOREIGN KEY ("project_id", "tenant_id") REFERENCES "projects"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
-- Deleting the author keeps the rule and forgets only who wrote it (a column list on SET NULL,
-- PostgreSQL 15+).
ALTER TABLE "rules" ADD CONSTRAINT "rules_created_by_key_id_tenant_id_fkey" FOREIGN KEY ("created_by_key_id", "tenant_id") REFERENCES "api_keys"("id", "tenant_id") ON DELETE SET NULL ("created_by_key_id") ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "rules" ADD CONSTRAINT "rules_created_by_user_id_tenant_id_fkey" FOREIGN KEY ("created_by_user_id", "tenant_id") REFERENCES "users"("id", "tenant_id") ON DELETE SET NULL ("created_by_user_id") ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "classifications" ADD CONSTRAINT "classifications_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "classifications" ADD CONSTRAINT "classifications_calendar_id_tenant_id_fkey" FOREIGN KEY ("calendar_id", "tenant_id") REFERENCES "calendars"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
-- Deleting a project (possible only once no rule names it) returns its occurrences to pending:
-- their classifications go, and the next application of the rules files them again.
ALTER TABLE "classifications" ADD CONSTRAINT "classifications_project_id_tenant_id_fkey" FOREIGN KEY ("project_id", "tenant_id") REFERENCES "projects"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;
