-- Verify cyclone:signals
BEGIN;
SELECT 'cyclone.signal(uuid, text, jsonb)'::regprocedure;
ROLLBACK;
