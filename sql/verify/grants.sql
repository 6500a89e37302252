-- Verify cyclone:grants
BEGIN;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.submit(text, jsonb, interval, text, timestamptz)', 'execute'))::int;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.claim(text, text[], int, interval)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_client', 'cyclone.submit(text, jsonb, interval, text, timestamptz)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.retry(uuid, text, int, text)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_worker', 'cyclone.retry(uuid, text, int, text)', 'execute'))::int;
ROLLBACK;
