-- Calgate as an OAuth 2.1 authorization server for MCP clients. Clients are global, as at any
-- authorization server. What a person approves for a client is an api_keys row of kind 'oauth'
-- (a "connection"): its hash is 32 random bytes that no bearer secret hashes to, so grants,
-- toolsets, the audit log and revocation apply to it unchanged. Codes and refresh tokens are
-- stored only as SHA-256 hashes and belong to a connection inside one tenant.

-- CreateTable
CREATE TABLE "oauth_clients" (
    "id" TEXT NOT NULL,
    -- Dynamic registration: the id itself; a Client ID Metadata Document: its https URL.
    "client_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "client_name" TEXT NOT NULL,
    "redirect_uris" TEXT[] NOT NULL,
    "token_endpoint_auth_method" TEXT NOT NULL,
    "client_secret_hash" BYTEA,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "refreshed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "oauth_clients_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "oauth_clients_kind" CHECK ("kind" IN ('registered', 'metadata_document')),
    CONSTRAINT "oauth_clients_client_id" CHECK (
        ("kind" = 'registered' AND "client_id" = "id")
        OR ("kind" = 'metadata_document' AND "client_id" LIKE 'https://%' AND char_length("client_id") <= 2048)),
    CONSTRAINT "oauth_clients_client_name_length" CHECK (char_length("client_name") BETWEEN 1 AND 200),
    -- Each URI's length (at most 2048) is checked by the repository; CHECK cannot look inside an array.
    CONSTRAINT "oauth_clients_redirect_uris_count" CHECK (cardinality("redirect_uris") BETWEEN 1 AND 10),
    CONSTRAINT "oauth_clients_auth_method" CHECK ("token_endpoint_auth_method" IN ('none', 'client_secret_basic', 'client_secret_post')),
    -- A secret hash exactly when the client authenticates with a secret; metadata-document clients are public.
    CONSTRAINT "oauth_clients_secret" CHECK (("token_endpoint_auth_method" <> 'none') = ("client_secret_hash" IS NOT NULL)),
    CONSTRAINT "oauth_clients_secret_hash_length" CHECK ("client_secret_hash" IS NULL OR octet_length("client_secret_hash") = 32),
    CONSTRAINT "oauth_clients_metadata_document_public" CHECK ("kind" = 'registered' OR "token_endpoint_auth_method" = 'none')
);

-- CreateIndex
CREATE UNIQUE INDEX "oauth_clients_client_id_key" ON "oauth_clients"("client_id");

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'key',
    ADD COLUMN "oauth_client_id" TEXT,
    -- The dashboard user who approved the connection; kept as null when that user goes.
    ADD COLUMN "user_id" TEXT,
    ADD CONSTRAINT "api_keys_kind" CHECK ("kind" IN ('key', 'oauth')),
    ADD CONSTRAINT "api_keys_oauth_client" CHECK (("kind" = 'oauth') = ("oauth_client_id" IS NOT NULL));

-- CreateIndex
CREATE INDEX "api_keys_oauth_client_id_idx" ON "api_keys"("oauth_client_id");

-- CreateIndex
CREATE INDEX "api_keys_user_id_tenant_id_idx" ON "api_keys"("user_id", "tenant_id");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_oauth_client_id_fkey" FOREIGN KEY ("oauth_client_id") REFERENCES "oauth_clients"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_tenant_id_fkey" FOREIGN KEY ("user_id", "tenant_id") REFERENCES "users"("id", "tenant_id") ON DELETE SET NULL ("user_id") ON UPDATE CASCADE;

-- CreateTable
CREATE TABLE "oauth_codes" (
    "hash" BYTEA NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "redirect_uri" TEXT NOT NULL,
    -- PKCE S256 only: base64url of a SHA-256, unpadded.
    "code_challenge" TEXT NOT NULL,
    "resource" TEXT NOT NULL,
    "scope" TEXT NOT NULL DEFAULT '',
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "oauth_codes_pkey" PRIMARY KEY ("hash"),
    CONSTRAINT "oauth_codes_hash_length" CHECK (octet_length("hash") = 32),
    CONSTRAINT "oauth_codes_code_challenge" CHECK ("code_challenge" ~ '^[A-Za-z0-9_-]{43}$')
);

-- CreateIndex
CREATE INDEX "oauth_codes_key_id_tenant_id_idx" ON "oauth_codes"("key_id", "tenant_id");

-- CreateIndex
CREATE INDEX "oauth_codes_client_id_idx" ON "oauth_codes"("client_id");

-- CreateTable
CREATE TABLE "oauth_refresh_tokens" (
    "hash" BYTEA NOT NULL,
    -- Every token rotated from one grant shares its family; reuse of a used one revokes them all.
    "family_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "resource" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "oauth_refresh_tokens_pkey" PRIMARY KEY ("hash"),
    CONSTRAINT "oauth_refresh_tokens_hash_length" CHECK (octet_length("hash") = 32)
);

-- CreateIndex
CREATE INDEX "oauth_refresh_tokens_family_id_idx" ON "oauth_refresh_tokens"("family_id");

-- CreateIndex
CREATE INDEX "oauth_refresh_tokens_key_id_tenant_id_idx" ON "oauth_refresh_tokens"("key_id", "tenant_id");

-- CreateIndex
CREATE INDEX "oauth_refresh_tokens_client_id_idx" ON "oauth_refresh_tokens"("client_id");

-- AddForeignKey
ALTER TABLE "oauth_codes" ADD CONSTRAINT "oauth_codes_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "oauth_codes" ADD CONSTRAINT "oauth_codes_key_id_tenant_id_fkey" FOREIGN KEY ("key_id", "tenant_id") REFERENCES "api_keys"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "oauth_codes" ADD CONSTRAINT "oauth_codes_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "oauth_clients"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "oauth_refresh_tokens" ADD CONSTRAINT "oauth_refresh_tokens_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "oauth_refresh_tokens" ADD CONSTRAINT "oauth_refresh_tokens_key_id_tenant_id_fkey" FOREIGN KEY ("key_id", "tenant_id") REFERENCES "api_keys"("id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "oauth_refresh_tokens" ADD CONSTRAINT "oauth_refresh_tokens_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "oauth_clients"("id") ON DELETE CASCADE ON UPDATE CASCADE;
