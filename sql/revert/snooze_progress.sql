-- Revert cyclone:snooze_progress
BEGIN;

DROP FUNCTION IF EXISTS cyclone.snooze(bigint, text, bigint, interval);
DROP FUNCTION IF EXISTS cyclone.progress(bigint, text, bigint, jsonb);

COMMIT;
