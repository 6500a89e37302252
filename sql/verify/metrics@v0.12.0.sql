-- Verify cyclone:metrics
BEGIN;
SELECT name, labels, value FROM cyclone.metrics() WHERE false;
SELECT 1 / has_function_privilege('cyclone_client', 'cyclone.metrics()', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.metrics()', 'execute'))::int;
SELECT 'cyclone.cyclone_runs_live'::regclass, 'cyclone.cyclone_steps_pending'::regclass,
       'cyclone.cyclone_runs_failed'::regclass;
ROLLBACK;
