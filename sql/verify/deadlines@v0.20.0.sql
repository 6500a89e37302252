-- Verify cyclone:deadlines
BEGIN;
SELECT 'cyclone.enforce_deadlines(int)'::regprocedure, 'cyclone._expire_waits(int)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.enforce_deadlines(int)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_worker', 'cyclone.enforce_deadlines(int)', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.enforce_deadlines(int)', 'execute'))::int;
-- The engine's statements read the live table only (history.sql).
SELECT 1 / (pg_get_functiondef('cyclone._expire_waits(int)'::regprocedure) ~ 'ONLY cyclone(\.cyclone)?_(runs|steps)')::int;
ROLLBACK;
