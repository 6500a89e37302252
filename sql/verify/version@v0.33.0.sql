-- Verify cyclone:version
BEGIN;
SELECT 1 / (cyclone.version() ~ '^[0-9]+\.[0-9]+\.[0-9]+$')::int;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.version()', 'execute')::int;
ROLLBACK;
