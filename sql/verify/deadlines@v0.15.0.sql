-- Verify cyclone:deadlines
BEGIN;
SELECT 'cyclone.enforce_deadlines(int)'::regprocedure, 'cyclone._expire_waits(int)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.enforce_deadlines(int)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_worker', 'cyclone.enforce_deadlines(int)', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.enforce_deadlines(int)', 'execute'))::int;
ROLLBACK;
