-- CreateTable
CREATE TABLE "oauth_states" (
    "nonce" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "user_id" TEXT,
    "code_verifier" TEXT NOT NULL,
    "grant_access" TEXT NOT NULL DEFAULT 'none',
    "grant_key_ids" TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "consumed_at" TIMESTAMPTZ(3),

    CONSTRAINT "oauth_states_pkey" PRIMARY KEY ("nonce"),
    CONSTRAINT "oauth_states_grant_access" CHECK ("grant_access" IN ('none', 'read', 'write'))
);

-- CreateIndex
CREATE INDEX "oauth_states_expires_at_idx" ON "oauth_states"("expires_at");

-- AddForeignKey
ALTER TABLE "oauth_states" ADD CONSTRAINT "oauth_states_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
