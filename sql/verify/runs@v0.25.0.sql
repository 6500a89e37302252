-- Verify cyclone:runs
BEGIN;
SELECT 'cyclone._lock_run(uuid)'::regprocedure,
       'cyclone._lock_existing_run(text, uuid)'::regprocedure,
       'cyclone._root_run(uuid)'::regprocedure,
       'cyclone._create_runs(text, jsonb, jsonb[], interval, text, timestamptz, uuid, bigint, text, int, text, interval)'::regprocedure,
       'cyclone._discard_steps(bigint[], text, text)'::regprocedure,
       'cyclone._end_run(uuid, text, text)'::regprocedure;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone._end_run(uuid, text, text)', 'execute'))::int;
SELECT 'cyclone._bucket_of(jsonb, text)'::regprocedure,
       'cyclone._insert_steps(text, uuid[], jsonb[], jsonb, timestamptz, int, int, int)'::regprocedure;
-- The engine's statements read the live table only (history.sql).
SELECT 1 / (pg_get_functiondef('cyclone._end_run(uuid, text, text)'::regprocedure) ~ 'ONLY cyclone(\.cyclone)?_(runs|steps)')::int;
-- Runs that end are queued for archive() (live_runs.sql).
SELECT 1 / (pg_get_functiondef('cyclone._end_run(uuid, text, text)'::regprocedure) ~ 'cyclone_archive_queue')::int;
ROLLBACK;
