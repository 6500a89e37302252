-- Verify cyclone:advance
BEGIN;
SELECT 'cyclone._lock_run(uuid)'::regprocedure,
       'cyclone._advance(uuid)'::regprocedure,
       'cyclone._discard_step(bigint, text, text)'::regprocedure,
       'cyclone._create_run(text, jsonb, interval, text, timestamptz, uuid, bigint)'::regprocedure;
ROLLBACK;
