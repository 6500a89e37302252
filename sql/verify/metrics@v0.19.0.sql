-- Verify cyclone:metrics
BEGIN;
SELECT name, labels, value FROM cyclone.metrics() WHERE false;
SELECT 1 / has_function_privilege('cyclone_client', 'cyclone.metrics()', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.metrics()', 'execute'))::int;
SELECT 'cyclone.cyclone_steps_pending_workflow'::regclass,
       'cyclone.cyclone_steps_dead_letters_workflow'::regclass;
-- live_runs.sql drops the index of live runs (the live table holds them).
SELECT 1 / (to_regclass('cyclone.cyclone_runs_live') IS NOT NULL
            OR to_regclass('cyclone.cyclone_archive_queue') IS NOT NULL)::int;
-- Issue 30: the ready lag and the next fire times leave infinite times out.
SELECT 1 / (pg_get_functiondef('cyclone.metrics()'::regprocedure) ~ 'isfinite\(s.scheduled_at\)')::int;
ROLLBACK;
