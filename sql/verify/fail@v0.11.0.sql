-- Verify cyclone:fail
BEGIN;
SELECT 'cyclone.backoff(int)'::regprocedure,
       'cyclone.fail(bigint, text, bigint, text, text, interval)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.fail(bigint, text, bigint, text, text, interval)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.backoff(int)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.fail(bigint, text, bigint, text, text, interval)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.fail(bigint, text, bigint, text, text, interval)', 'execute'))::int;
ROLLBACK;
