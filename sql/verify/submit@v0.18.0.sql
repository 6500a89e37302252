-- Verify cyclone:submit
BEGIN;
SELECT 'cyclone.submit(text, jsonb, interval, text, timestamptz, text)'::regprocedure,
       'cyclone.submit_many(text, jsonb[], interval)'::regprocedure,
       'cyclone.get_run(uuid)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_client', 'cyclone.submit(text, jsonb, interval, text, timestamptz, text)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_client', 'cyclone.get_run(uuid)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.submit_many(text, jsonb[], interval)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.submit(text, jsonb, interval, text, timestamptz, text)', 'execute'))::int;
SELECT 1 / (SELECT count(*) = 1 FROM pg_proc WHERE proname = 'submit' AND pronamespace = 'cyclone'::regnamespace)::int;
-- get_run reads the live tables first (history.sql).
SELECT 1 / (pg_get_functiondef('cyclone.get_run(uuid)'::regprocedure) ~ 'ONLY cyclone_runs')::int;
ROLLBACK;
