-- Verify cyclone:complete
BEGIN;
SELECT 'cyclone.complete(bigint, text, bigint, jsonb)'::regprocedure,
       'cyclone.complete_many(text, bigint[], bigint[], jsonb[])'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.complete(bigint, text, bigint, jsonb)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.complete_many(text, bigint[], bigint[], jsonb[])', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.complete(bigint, text, bigint, jsonb)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.complete(bigint, text, bigint, jsonb)', 'execute'))::int;
-- The engine's statements read the live table only (history.sql).
SELECT 1 / (pg_get_functiondef('cyclone.complete(bigint, text, bigint, jsonb)'::regprocedure) ~ 'ONLY cyclone(\.cyclone)?_(runs|steps)')::int;
-- Outputs are held to the payload limits (issue 30: 1 MiB, nested at most 100 levels).
SELECT 1 / (pg_get_functiondef('cyclone.complete(bigint, text, bigint, jsonb)'::regprocedure) ~ '_payload_problem\(p_output\)')::int;
SELECT 1 / (pg_get_functiondef('cyclone.complete_many(text, bigint[], bigint[], jsonb[])'::regprocedure) ~ '_payload_problem')::int;
-- Issue 35 (SPEC 18): a result after the step's timeout is refused.
SELECT 1 / (pg_get_functiondef('cyclone.complete(bigint, text, bigint, jsonb)'::regprocedure) ~ 'started_at \+ least\(timeout')::int;
SELECT 1 / (pg_get_functiondef('cyclone.complete_many(text, bigint[], bigint[], jsonb[])'::regprocedure) ~ 'started_at \+ least\(s.timeout')::int;
-- Issue 32: complete_many ends runs of one step through _complete_solo_runs.
SELECT 1 / (pg_get_functiondef('cyclone.complete_many(text,bigint[],bigint[],jsonb[])'::regprocedure) ~ '_complete_solo_runs')::int;
-- Issue 32: only a batch with a step of a workflow of one node asks _complete_solo_runs.
SELECT 1 / (pg_get_functiondef('cyclone.complete_many(text,bigint[],bigint[],jsonb[])'::regprocedure)
            ~ 'jsonb_array_length\(w.definition -> ''nodes''\) = 1')::int;
ROLLBACK;
