-- Verify cyclone:submit
BEGIN;
SELECT 'cyclone.submit(text, jsonb, interval, text, timestamptz, text, int)'::regprocedure,
       'cyclone.submit_many(text, jsonb[], interval, int)'::regprocedure,
       'cyclone.get_run(uuid)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_client', 'cyclone.submit(text, jsonb, interval, text, timestamptz, text, int)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_client', 'cyclone.get_run(uuid)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.submit_many(text, jsonb[], interval, int)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.submit(text, jsonb, interval, text, timestamptz, text, int)', 'execute'))::int;
SELECT 1 / (SELECT count(*) = 1 FROM pg_proc WHERE proname = 'submit' AND pronamespace = 'cyclone'::regnamespace)::int;
-- get_run reads the live tables first (history.sql).
SELECT 1 / (pg_get_functiondef('cyclone.get_run(uuid)'::regprocedure) ~ 'ONLY cyclone_runs')::int;
-- The argument limits of issue 30: a run input is checked by _input_problem (an object, 1 MiB, 100 levels),
-- the key's length, p_run_at's range, the deadline's bound, and submit_many's count.
SELECT 1 / (pg_get_functiondef('cyclone.submit(text, jsonb, interval, text, timestamptz, text, int)'::regprocedure)
            ~ '_input_problem')::int;
SELECT 1 / (pg_get_functiondef('cyclone.submit(text, jsonb, interval, text, timestamptz, text, int)'::regprocedure)
            ~ 'p_run_at must be within 100 years')::int;
SELECT 1 / (pg_get_functiondef('cyclone.submit(text, jsonb, interval, text, timestamptz, text, int)'::regprocedure)
            ~ 'octet_length\(p_idempotency_key\) > 1000')::int;
SELECT 1 / (pg_get_functiondef('cyclone.submit_many(text, jsonb[], interval, int)'::regprocedure)
            ~ 'cardinality\(p_inputs\) > 10000')::int;
SELECT 1 / (pg_get_functiondef('cyclone.submit_many(text, jsonb[], interval, int)'::regprocedure) ~ '_input_problem')::int;
-- Run priority (SPEC 16, issue 33): -1000..1000, kept on the run.
SELECT 1 / (pg_get_functiondef('cyclone.submit(text, jsonb, interval, text, timestamptz, text, int)'::regprocedure)
            ~ 'p_priority NOT BETWEEN -1000 AND 1000')::int;
SELECT 1 / (SELECT count(*) = 1 FROM pg_proc WHERE proname = 'submit_many' AND pronamespace = 'cyclone'::regnamespace)::int;
ROLLBACK;
