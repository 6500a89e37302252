-- Revert cyclone:signals
BEGIN;
DROP FUNCTION cyclone.signal(uuid, text, jsonb);
COMMIT;
