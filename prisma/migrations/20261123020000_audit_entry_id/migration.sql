-- A per-row id chosen by the gateway when it records a tool call, so that a batch retried after
-- a lost answer, or a spool file replayed after a crash, inserts each row once
-- (INSERT … ON CONFLICT ("entry_id") DO NOTHING). Rows written before it have none.
ALTER TABLE "audit_log" ADD COLUMN "entry_id" UUID;

-- CreateIndex
CREATE UNIQUE INDEX "audit_log_entry_id_key" ON "audit_log"("entry_id");
