-- A search across several of a tenant's mirrored calendars walks the tenant's single events and
-- exceptions in start order (MirrorRepository.readFirst): one ordered read instead of a branch
-- per calendar, whose planning cost more than the read.
CREATE INDEX "mirror_events_tenant_first_idx" ON "mirror_events" ("tenant_id", "start_at", "event_id")
  WHERE "recurrence" = '{}'::text[];
