-- Verify cyclone:snooze_progress
BEGIN;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.snooze(bigint, text, bigint, interval)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.progress(bigint, text, bigint, jsonb)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_client', 'cyclone.snooze(bigint, text, bigint, interval)', 'execute'))::int;
ROLLBACK;
