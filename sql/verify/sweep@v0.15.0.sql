-- Verify cyclone:sweep
BEGIN;
SELECT 'cyclone.sweep(int, int)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.sweep(int, int)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_worker', 'cyclone.sweep(int, int)', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.sweep(int, int)', 'execute'))::int;
ROLLBACK;
