-- What a key's risky actions (deleting events, batch changes, inviting outsiders, schedules to
-- named targets) need after its agent was shown flagged or outside-organised content:
-- 'ask' (the client's form when it has one, else the dashboard), 'strict' (always the
-- dashboard) or 'off' (no check).
ALTER TABLE "api_keys" ADD COLUMN "hijack_policy" TEXT NOT NULL DEFAULT 'ask';
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_hijack_policy_check"
  CHECK ("hijack_policy" IN ('strict', 'ask', 'off'));

-- A risky call refused until a person confirms it in the dashboard. Bound to the key, the tool
-- and a hash of the call's arguments; used once. `action` and `preceded` name ids, tools,
-- addresses and reasons, never the withheld text.
CREATE TABLE "action_confirmations" (
  "id" TEXT NOT NULL,
  "tenant_id" TEXT NOT NULL,
  "key_id" TEXT NOT NULL,
  "tool" TEXT NOT NULL,
  "args_hash" TEXT NOT NULL,
  "calendar_ids" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
  "action" TEXT NOT NULL,
  "preceded" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
  "status" TEXT NOT NULL DEFAULT 'pending',
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "expires_at" TIMESTAMPTZ(3) NOT NULL,
  "decided_by" TEXT,
  "decided_at" TIMESTAMPTZ(3),
  "used_at" TIMESTAMPTZ(3),
  CONSTRAINT "action_confirmations_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "action_confirmations_status_check" CHECK ("status" IN ('pending', 'approved', 'declined', 'used')),
  CONSTRAINT "action_confirmations_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  CONSTRAINT "action_confirmations_key_id_tenant_id_fkey" FOREIGN KEY ("key_id", "tenant_id") REFERENCES "api_keys"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "action_confirmations_tenant_id_created_at_idx" ON "action_confirmations"("tenant_id", "created_at" DESC);
CREATE INDEX "action_confirmations_key_id_tenant_id_idx" ON "action_confirmations"("key_id", "tenant_id");
