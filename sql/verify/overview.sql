-- Verify cyclone:overview
BEGIN;
SELECT 1 / has_function_privilege('cyclone_client', 'cyclone.overview_gauges(integer)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_client',
    'cyclone.finished_per_minute(timestamp with time zone, timestamp with time zone)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_client',
    'cyclone.finished_runs(timestamp with time zone, timestamp with time zone, text, text, integer, timestamp with time zone, uuid)',
    'execute')::int;
SELECT 1 / (count(*) = 0)::int FROM cyclone.finished_per_minute(cyclone.now() - interval '1 hour', cyclone.now())
 WHERE false;
ROLLBACK;
