-- When a series master's last occurrence ends (a day later, so floating times in any zone are
-- covered): listings skip series that ended before their window instead of expanding them.
-- NULL: the series never ends, or the row was stored before this column (read as never ending).
ALTER TABLE "mirror_events" ADD COLUMN "series_end" TIMESTAMPTZ(3);
