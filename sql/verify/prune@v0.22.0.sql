-- Verify cyclone:prune
BEGIN;
SELECT 'cyclone.prune(interval, int)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.prune(interval, int)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_worker', 'cyclone.prune(interval, int)', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.prune(interval, int)', 'execute'))::int;
SELECT 'cyclone._drop_history_day(date)'::regprocedure;
-- Runs that end are queued for archive() (live_runs.sql).
SELECT 1 / (pg_get_functiondef('cyclone.prune(interval, int)'::regprocedure) ~ 'cyclone_archive_queue')::int;
ROLLBACK;
