-- Verify cyclone:sweep
BEGIN;
SELECT 'cyclone.sweep(int, int)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.sweep(int, int)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_worker', 'cyclone.sweep(int, int)', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.sweep(int, int)', 'execute'))::int;
-- The engine's statements read the live table only (history.sql).
SELECT 1 / (pg_get_functiondef('cyclone.sweep(int, int)'::regprocedure) ~ 'ONLY cyclone(\.cyclone)?_(runs|steps)')::int;
-- A timeout counts as at most 366 days (a stored older one would overflow started_at + timeout).
SELECT 1 / (pg_get_functiondef('cyclone._sweep_candidates(timestamptz, int)'::regprocedure)
            ~ 'least\(s\.timeout, interval ''366 days''\)')::int;
ROLLBACK;
