-- Verify cyclone:signals
BEGIN;
SELECT 'cyclone.signal(uuid, text, jsonb)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_client', 'cyclone.signal(uuid, text, jsonb)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.signal(uuid, text, jsonb)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.signal(uuid, text, jsonb)', 'execute'))::int;
-- The engine's statements read the live table only (history.sql).
SELECT 1 / (pg_get_functiondef('cyclone.signal(uuid, text, jsonb)'::regprocedure) ~ 'ONLY cyclone(\.cyclone)?_(runs|steps)')::int;
ROLLBACK;
