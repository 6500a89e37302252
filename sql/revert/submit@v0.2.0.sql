-- Revert cyclone:submit
BEGIN;
DROP FUNCTION cyclone.get_run(uuid);
DROP FUNCTION cyclone.submit_many(text, jsonb[], interval);
DROP FUNCTION cyclone.submit(text, jsonb, interval, text, timestamptz);
COMMIT;
