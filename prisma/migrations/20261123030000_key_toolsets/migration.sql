-- The toolsets whose tools a key's agent sees. Existing keys get the default, which is every tool
-- there was before toolsets, so their agents keep today's view.
ALTER TABLE "api_keys" ADD COLUMN "toolsets" TEXT[] NOT NULL DEFAULT ARRAY['calendar', 'booking', 'search']::TEXT[];

-- Only known toolset names, at least one. `<@` counts a NULL element as not contained.
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_toolsets_check"
  CHECK (cardinality("toolsets") > 0 AND "toolsets" <@ ARRAY['calendar', 'booking', 'search', 'rules']::TEXT[]);
