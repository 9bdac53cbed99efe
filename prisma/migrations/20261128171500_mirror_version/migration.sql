-- A calendar's mirror version: moved on (to a value never used before, from one sequence) by every
-- transaction that changes the calendar's mirrored events, so a reader may keep what it computed
-- from them (free/busy answers) for as long as the version it read stays the same. Values are
-- never reused, not even after a calendar's mirror is dropped and synced again.
CREATE SEQUENCE mirror_version_seq;
ALTER TABLE mirror_sync_state ADD COLUMN version bigint NOT NULL DEFAULT nextval('mirror_version_seq');
ALTER SEQUENCE mirror_version_seq OWNED BY mirror_sync_state.version;
