-- Verify cyclone:operator
BEGIN;
SELECT 'cyclone.retry(uuid, text, int, text)'::regprocedure, 'cyclone.retry_all(uuid, text)'::regprocedure,
       'cyclone.cancel(uuid, text)'::regprocedure, 'cyclone.pause(uuid)'::regprocedure,
       'cyclone.resume(uuid)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.retry(uuid, text, int, text)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.resume(uuid)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_worker', 'cyclone.retry(uuid, text, int, text)', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('cyclone_client', 'cyclone.cancel(uuid, text)', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.pause(uuid)', 'execute'))::int;
ROLLBACK;
