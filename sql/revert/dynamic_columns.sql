-- Revert cyclone:dynamic_columns
BEGIN;

ALTER TABLE cyclone.cyclone_steps DROP COLUMN progress_at, DROP COLUMN progress, DROP COLUMN snoozes;
ALTER TABLE cyclone.cyclone_runs DROP COLUMN priority;

COMMIT;
