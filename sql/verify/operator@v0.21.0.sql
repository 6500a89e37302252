-- Verify cyclone:operator
BEGIN;
SELECT 'cyclone.retry(uuid, text, int, text)'::regprocedure, 'cyclone.retry_all(uuid, text)'::regprocedure,
       'cyclone.cancel(uuid, text)'::regprocedure, 'cyclone.pause(uuid)'::regprocedure,
       'cyclone.resume(uuid)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.retry(uuid, text, int, text)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.resume(uuid)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_worker', 'cyclone.retry(uuid, text, int, text)', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('cyclone_client', 'cyclone.cancel(uuid, text)', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.pause(uuid)', 'execute'))::int;
-- The engine's statements read the live table only (history.sql).
SELECT 1 / (pg_get_functiondef('cyclone._reopen(cyclone.cyclone_runs, bigint[], int, text)'::regprocedure) ~ 'ONLY cyclone(\.cyclone)?_(runs|steps)')::int;
-- Runs that end are queued for archive() (live_runs.sql).
SELECT 1 / (pg_get_functiondef('cyclone._reopen(cyclone.cyclone_runs, bigint[], int, text)'::regprocedure) ~ 'cyclone_archive_queue')::int;
ROLLBACK;
