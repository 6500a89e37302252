-- Verify cyclone:signals
BEGIN;
SELECT 'cyclone.signal(uuid, text, jsonb)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_client', 'cyclone.signal(uuid, text, jsonb)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.signal(uuid, text, jsonb)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.signal(uuid, text, jsonb)', 'execute'))::int;
ROLLBACK;
