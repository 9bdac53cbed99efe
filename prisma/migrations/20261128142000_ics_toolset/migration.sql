-- Keys may switch on the 'ics' toolset (iCalendar import). It is not a default: existing and new
-- keys keep their toolsets until someone ticks it.
ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_toolsets_check";
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_toolsets_check"
  CHECK (cardinality("toolsets") > 0 AND "toolsets" <@ ARRAY['calendar', 'booking', 'search', 'rules', 'scheduler', 'ics']::TEXT[]);
