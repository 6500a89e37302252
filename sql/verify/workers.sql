-- Verify cyclone:workers
BEGIN;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.register_worker(text,jsonb)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.register_worker(text,jsonb)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_client', 'cyclone.register_worker(text,jsonb)', 'execute'))::int;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.deregister_worker(text)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.deregister_worker(text)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone._forget_workers(timestamptz)', 'execute'))::int;
ROLLBACK;
