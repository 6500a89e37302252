-- Verify cyclone:complete
BEGIN;
SELECT 'cyclone.complete(bigint, text, bigint, jsonb)'::regprocedure,
       'cyclone.complete_many(text, bigint[], bigint[], jsonb[])'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.complete(bigint, text, bigint, jsonb)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.complete_many(text, bigint[], bigint[], jsonb[])', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.complete(bigint, text, bigint, jsonb)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.complete(bigint, text, bigint, jsonb)', 'execute'))::int;
ROLLBACK;
