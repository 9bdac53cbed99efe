-- Dashboard actions (who revoked which key, who changed which grant) are audit rows beside tool
-- calls, in the same table: one filter, one cursor, one CSV and one retention job cover both.
-- `kind` says which a row is; `tool` holds the tool's name or the action's name (e.g. 'key.revoke').
-- A dashboard row names its actor in `actor_user_id` (key_id stays null) and what it acted on in
-- `target` (ids only: key, calendar, app, connection). `client_name` is the MCP client's product
-- token for tool calls; `error_message` is the text a failed dashboard action answered with.
ALTER TABLE "audit_log" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'tool';
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_kind_check" CHECK ("kind" IN ('tool', 'dashboard'));
ALTER TABLE "audit_log" ADD COLUMN "actor_user_id" TEXT;
ALTER TABLE "audit_log" ADD COLUMN "target" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
ALTER TABLE "audit_log" ADD COLUMN "client_name" TEXT;
ALTER TABLE "audit_log" ADD COLUMN "error_message" TEXT;

-- The actor filter (a key, an app's key, or a person) walks only that actor's rows.
CREATE INDEX "audit_log_tenant_id_key_id_id_idx" ON "audit_log"("tenant_id", "key_id", "id" DESC);
CREATE INDEX "audit_log_tenant_id_actor_user_id_id_idx" ON "audit_log"("tenant_id", "actor_user_id", "id" DESC);
