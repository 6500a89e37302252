-- Verify cyclone:history
BEGIN;
SELECT day, runs, steps FROM cyclone.cyclone_history WHERE false;
SELECT workflow, key, run_id FROM cyclone.cyclone_run_keys WHERE false;
SELECT 'cyclone.archive(int)'::regprocedure, 'cyclone._history_day(date)'::regprocedure,
       'cyclone._revive(uuid)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.archive(int)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.archive(int)', 'execute'))::int;
ROLLBACK;
