-- Verify cyclone:claim
BEGIN;
SELECT 'cyclone.claim(text, text[], int, interval)'::regprocedure,
       'cyclone.renew(bigint, text, bigint, interval)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.claim(text, text[], int, interval)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.renew(bigint, text, bigint, interval)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.claim(text, text[], int, interval)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_client', 'cyclone.claim(text, text[], int, interval)', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.renew(bigint, text, bigint, interval)', 'execute'))::int;
ROLLBACK;
