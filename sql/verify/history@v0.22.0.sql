-- Verify cyclone:history
BEGIN;
SELECT day, runs, steps FROM cyclone.cyclone_history WHERE false;
SELECT workflow, key, run_id FROM cyclone.cyclone_run_keys WHERE false;
SELECT 'cyclone.archive(int)'::regprocedure, 'cyclone._history_day(date)'::regprocedure,
       'cyclone._revive(uuid)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.archive(int)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.archive(int)', 'execute'))::int;
-- Runs that end are queued for archive() (live_runs.sql).
SELECT 1 / (pg_get_functiondef('cyclone.archive(int)'::regprocedure) ~ 'cyclone_archive_queue')::int;
SELECT 1 / (pg_get_functiondef('cyclone._archive_day(date, uuid[])'::regprocedure) ~ 'cyclone_archive_queue')::int;
SELECT 1 / (pg_get_functiondef('cyclone._revive(uuid)'::regprocedure) ~ 'cyclone_archive_queue')::int;
ROLLBACK;
