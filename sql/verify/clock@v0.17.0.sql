-- Verify cyclone:clock
BEGIN;
SELECT singleton, time_offset FROM cyclone.clock WHERE FALSE;
SELECT 'cyclone.now()'::regprocedure, 'cyclone.advance_time(interval)'::regprocedure,
       'cyclone.reset_time()'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.now()', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_client', 'cyclone.now()', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.advance_time(interval)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_worker', 'cyclone.advance_time(interval)', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.reset_time()', 'execute'))::int;
ROLLBACK;
