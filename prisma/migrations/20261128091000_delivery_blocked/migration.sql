-- An occurrence whose target a worker's URL policy refuses (OUTBOUND_ALLOW_PRIVATE) waits as
-- `blocked` until a worker starts, possibly with another policy, and queues it again.
ALTER TABLE "deliveries" DROP CONSTRAINT "deliveries_status";
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_status"
    CHECK ("status" IN ('pending', 'delivered', 'failed', 'missed', 'retrying', 'blocked'));
CREATE INDEX "deliveries_blocked_idx" ON "deliveries" ("occurrence_at") WHERE "status" = 'blocked';
