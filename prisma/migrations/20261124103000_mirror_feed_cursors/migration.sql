-- Where each consumer of the mirror's change feed (mirror_changes) stands: the id of the last
-- change it has fully handled. A consumer takes its row with SELECT … FOR UPDATE SKIP LOCKED,
-- handles the changes after last_id and moves last_id in the same transaction, so across any
-- number of workers one handles a batch at a time, and a worker that dies before its commit
-- leaves the batch to the next one (at least once; consumers make handling idempotent).
--
-- No foreign key to mirror_changes: feed rows of a deleted calendar go, cursors stay.
CREATE TABLE "mirror_feed_cursors" (
    "consumer" TEXT NOT NULL,
    "last_id" BIGINT NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mirror_feed_cursors_pkey" PRIMARY KEY ("consumer"),
    CONSTRAINT "mirror_feed_cursors_last_id_check" CHECK ("last_id" >= 0)
);
