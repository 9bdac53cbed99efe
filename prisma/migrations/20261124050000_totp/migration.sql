-- Two-step sign-in with a time-based one-time password (TOTP), and what the sessions list shows
-- about each session.
--
-- user_totp holds one authenticator per user. The secret is sealed with the SecretBox (bound to
-- the tenant and `totp:<user id>`), never stored in the clear. A row with no confirmed_at is a
-- set-up in progress and does not guard sign-in. last_used_step is the newest time step a code
-- was accepted for, so a code cannot be used twice. Recovery codes are kept as SHA-256 hex.

-- CreateTable
CREATE TABLE "user_totp" (
    "user_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "secret" BYTEA NOT NULL,
    "secret_key_id" TEXT NOT NULL,
    "confirmed_at" TIMESTAMPTZ(3),
    "last_used_step" BIGINT,
    "recovery_code_hashes" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "user_totp_pkey" PRIMARY KEY ("user_id")
);

-- CreateIndex
CREATE INDEX "user_totp_tenant_id_idx" ON "user_totp"("tenant_id");

-- AddForeignKey
ALTER TABLE "user_totp" ADD CONSTRAINT "user_totp_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_totp" ADD CONSTRAINT "user_totp_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The client a session was signed in from, as the gateway saw it (null for sessions that
-- started before this migration or were issued without a request).
ALTER TABLE "sessions" ADD COLUMN "user_agent" TEXT;
ALTER TABLE "sessions" ADD COLUMN "ip" TEXT;
