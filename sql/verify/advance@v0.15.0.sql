-- Verify cyclone:advance
BEGIN;
SELECT 'cyclone._start_runs(text, jsonb[], interval, text, timestamptz, uuid, bigint, text)'::regprocedure,
       'cyclone._advance(uuid)'::regprocedure,
       'cyclone._advance_runs(uuid[])'::regprocedure,
       'cyclone._discard_step(bigint, text, text)'::regprocedure,
       'cyclone._notify_parent(uuid)'::regprocedure;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone._advance(uuid)', 'execute'))::int;
ROLLBACK;
