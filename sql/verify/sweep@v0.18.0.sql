-- Verify cyclone:sweep
BEGIN;
SELECT 'cyclone.sweep(int, int)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.sweep(int, int)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_worker', 'cyclone.sweep(int, int)', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.sweep(int, int)', 'execute'))::int;
-- The engine's statements read the live table only (history.sql).
SELECT 1 / (pg_get_functiondef('cyclone.sweep(int, int)'::regprocedure) ~ 'ONLY cyclone(\.cyclone)?_(runs|steps)')::int;
ROLLBACK;
