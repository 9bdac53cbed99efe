-- Rotation with a grace period: the secret a rotation replaced keeps working, for the same key,
-- until previous_valid_until. The bearer lookup matches hash or (while valid) previous_hash.
ALTER TABLE "api_keys" ADD COLUMN "previous_hash" BYTEA;
ALTER TABLE "api_keys" ADD COLUMN "previous_valid_until" TIMESTAMPTZ(3);

-- Both or neither.
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_previous_hash_check"
  CHECK (("previous_hash" IS NULL) = ("previous_valid_until" IS NULL));

CREATE UNIQUE INDEX "api_keys_previous_hash_key" ON "api_keys"("previous_hash");
