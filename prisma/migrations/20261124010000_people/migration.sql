-- People in a tenant: a role per user, invitations by e-mail link and one-time password-reset
-- links. Links carry a random token; the tables hold only its SHA-256, so a leaked table row
-- cannot be turned into a sign-in.

-- Users without a stated role are owners: every existing user (the one who signed up first) and
-- the first user of a new install. Invitations always name the role.
ALTER TABLE "users" ADD COLUMN "role" TEXT NOT NULL DEFAULT 'owner';
ALTER TABLE "users" ADD CONSTRAINT "users_role_known" CHECK ("role" IN ('owner', 'admin', 'member', 'auditor'));

-- The dashboard user who created an API key; null for keys from the CLI or before this column.
ALTER TABLE "api_keys" ADD COLUMN "created_by" TEXT;
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_created_by_fkey" FOREIGN KEY ("created_by") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
CREATE INDEX "api_keys_created_by_idx" ON "api_keys"("created_by");

-- CreateTable
CREATE TABLE "invitations" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "token_hash" BYTEA NOT NULL,
    "invited_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "accepted_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "invitations_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "invitations_role_known" CHECK ("role" IN ('owner', 'admin', 'member', 'auditor')),
    CONSTRAINT "invitations_token_is_sha256" CHECK (octet_length("token_hash") = 32)
);

CREATE UNIQUE INDEX "invitations_token_hash_key" ON "invitations"("token_hash");
CREATE INDEX "invitations_tenant_id_idx" ON "invitations"("tenant_id");

ALTER TABLE "invitations" ADD CONSTRAINT "invitations_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "invitations" ADD CONSTRAINT "invitations_invited_by_fkey" FOREIGN KEY ("invited_by") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- CreateTable
CREATE TABLE "password_resets" (
    "token_hash" BYTEA NOT NULL,
    "user_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),

    CONSTRAINT "password_resets_pkey" PRIMARY KEY ("token_hash"),
    CONSTRAINT "password_resets_token_is_sha256" CHECK (octet_length("token_hash") = 32)
);

CREATE INDEX "password_resets_user_id_idx" ON "password_resets"("user_id");

ALTER TABLE "password_resets" ADD CONSTRAINT "password_resets_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
